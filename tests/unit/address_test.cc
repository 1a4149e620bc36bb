#include "src/model/address.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

TEST(AddressTest, ParsesIpv4AndIpv6) {
  absl::StatusOr<SocketAddress> v4 = ParseSocketAddress("10.0.0.1:8080");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_FALSE(v4->ipv6);
  EXPECT_EQ(v4->ip, "10.0.0.1");
  EXPECT_EQ(v4->port, 8080);
  EXPECT_EQ(GrpcTargetFor(*v4), "ipv4:10.0.0.1:8080");

  absl::StatusOr<SocketAddress> v6 = ParseSocketAddress("[::1]:443");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_TRUE(v6->ipv6);
  EXPECT_EQ(GrpcTargetFor(*v6), "ipv6:[::1]:443");
}

TEST(AddressTest, RejectsBadAddressesWithMessages) {
  for (const char* bad : {"", "10.0.0.1", "10.0.0.1:0", "10.0.0.1:70000",
                          "10.0.0.1:-1", "10.0.0.1:http", "books:80", "[::1:80",
                          "[::1]80", "300.0.0.1:80", "[zz]:80"}) {
    absl::StatusOr<SocketAddress> a = ParseSocketAddress(bad);
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(
      ParseSocketAddress("10.0.0.1:70000").status().message().find("1..65535"),
      std::string::npos);
}

TEST(AddressTest, ValidatesDestinations) {
  EXPECT_TRUE(ValidateDestination("books.default.svc.cluster.local:7001").ok());
  EXPECT_TRUE(ValidateDestination("10.0.0.1:80").ok());
  EXPECT_EQ(ValidateDestination("").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateDestination("books").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateDestination(":80").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateDestination("books:0").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateDestination("books:70000").code(),
            absl::StatusCode::kInvalidArgument);
  // Names end up in logs, labels and protobuf strings.
  EXPECT_THAT(std::string(ValidateDestination("bo oks:80").message()),
              ::testing::HasSubstr("space or control character"));
  EXPECT_THAT(
      std::string(ValidateDestination(std::string("b\0:80", 5)).message()),
      ::testing::HasSubstr("'b\\x00:80'"));
  EXPECT_THAT(std::string(ValidateDestination("b\xff:80").message()),
              ::testing::HasSubstr("not valid UTF-8"));
  EXPECT_TRUE(ValidateDestination("b\xc3\xbc.local:80").ok());
}

}  // namespace
}  // namespace mesh::internal
