// ReadAddressAnswer on DNS messages built byte by byte: CNAMEs followed in
// any order and case, loops and chains described, TTLs, and malformed
// messages (short, records past the end, a name pointing at itself)
// refused naming the problem.
#include "src/discovery/dns/dns_answer.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

void Put16(std::string* out, uint32_t v) {
  out->push_back(static_cast<char>((v >> 8) & 0xff));
  out->push_back(static_cast<char>(v & 0xff));
}

std::string Name(const std::string& name) {
  std::string out;
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    out.push_back(static_cast<char>(label.size()));
    out.append(label.data(), label.size());
  }
  out.push_back('\0');
  return out;
}

// A response to one question of `type` for `name`, records added in order.
class Message {
 public:
  Message(const std::string& name, int type) {
    Put16(&bytes_, 0x1234);  // ID
    Put16(&bytes_, 0x8180);  // QR, RD, RA, NOERROR
    Put16(&bytes_, 1);
    Put16(&bytes_, 0);  // ANCOUNT, set by Add
    Put16(&bytes_, 0);
    Put16(&bytes_, 0);
    bytes_ += Name(name);
    Put16(&bytes_, type);
    Put16(&bytes_, 1);
  }
  Message& Add(const std::string& owner, int type, uint32_t ttl,
               const std::string& data) {
    bytes_ += Name(owner);
    Put16(&bytes_, type);
    Put16(&bytes_, 1);
    Put16(&bytes_, ttl >> 16);
    Put16(&bytes_, ttl & 0xffff);
    Put16(&bytes_, data.size());
    bytes_ += data;
    ++count_;
    bytes_[6] = static_cast<char>(count_ >> 8);
    bytes_[7] = static_cast<char>(count_ & 0xff);
    return *this;
  }
  Message& A(const std::string& owner, std::string ip4, uint32_t ttl = 60) {
    return Add(owner, kDnsA, ttl, ip4);
  }
  Message& Cname(const std::string& owner, const std::string& target,
                 uint32_t ttl = 60) {
    return Add(owner, 5, ttl, Name(target));
  }
  absl::StatusOr<AddressRecords> Read(int type = kDnsA) const {
    return ReadAddressAnswer(
        reinterpret_cast<const unsigned char*>(bytes_.data()), bytes_.size(),
        type);
  }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
  int count_ = 0;
};

const std::string kTen = std::string("\x0a\x00\x00\x01", 4);  // 10.0.0.1

TEST(DnsAnswerTest, FollowsCnamesInAnyOrderAndCase) {
  auto r = Message("a.test", kDnsA)
               .A("C.test", kTen, 30)
               .Cname("B.TEST", "c.test", 20)
               .Cname("a.test", "b.test", 40)
               .A("a.test", std::string("\x0a\x00\x00\x09", 4))  // not the end
               .Read();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->name, "a.test");
  EXPECT_THAT(r->cnames, ElementsAre("b.test", "c.test"));
  EXPECT_THAT(r->addresses, ElementsAre("10.0.0.1"));
  EXPECT_EQ(r->ttl, absl::Seconds(20));
}

TEST(DnsAnswerTest, RecordsOfAnotherTypeOrLengthAreNotAddresses) {
  auto r = Message("a.test", kDnsAaaa)
               .A("a.test", kTen)                     // an A, AAAA asked
               .Add("a.test", kDnsAaaa, 60, "short")  // 5 bytes
               .Read(kDnsAaaa);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->addresses.empty());
  EXPECT_TRUE(r->cnames.empty());
}

TEST(DnsAnswerTest, ATtlWithTheTopBitSetIsZero) {
  auto r = Message("a.test", kDnsA).A("a.test", kTen, 0x80000000u).Read();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ttl, absl::ZeroDuration());
}

TEST(DnsAnswerTest, ALoopIsRefusedNamingTheChain) {
  auto r = Message("a.test", kDnsA)
               .Cname("a.test", "b.test")
               .Cname("b.test", "c.test")
               .Cname("c.test", "b.test")
               .Read();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(),
              HasSubstr("the CNAME chain could not be followed: it loops "
                        "(a.test -> b.test -> c.test -> b.test)"));
}

TEST(DnsAnswerTest, AChainWithoutAnEndAddressHasNoAddresses) {
  auto r = Message("a.test", kDnsA).Cname("a.test", "b.test").Read();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->cnames, ElementsAre("b.test"));
  EXPECT_TRUE(r->addresses.empty());
}

TEST(DnsAnswerTest, ALongChainIsDescribedShort) {
  std::vector<std::string> cnames;
  for (int i = 1; i <= 20; ++i) cnames.push_back(absl::StrCat("n", i));
  EXPECT_EQ(DescribeChain("n0", cnames),
            "n0 -> n1 -> n2 -> n3 -> n4 -> n5 -> n6 -> n7 -> (12 more) -> n20");
  EXPECT_EQ(DescribeChain("n0", {"n1"}), "n0 -> n1");
}

TEST(DnsAnswerTest, MalformedMessagesAreRefused) {
  const unsigned char tiny[4] = {0, 0, 0, 0};
  EXPECT_THAT(ReadAddressAnswer(tiny, sizeof(tiny), kDnsA).status().message(),
              HasSubstr("malformed DNS answer: shorter than a header"));

  Message past("a.test", kDnsA);
  past.A("a.test", kTen);
  past.bytes().resize(past.bytes().size() - 2);  // the address cut short
  EXPECT_THAT(past.Read().status().message(),
              HasSubstr("a record runs past the end"));

  Message more("a.test", kDnsA);
  more.A("a.test", kTen);
  more.bytes()[7] = 2;  // says two records, holds one
  EXPECT_THAT(more.Read().status().message(), HasSubstr("malformed"));

  // An owner name that is a compression pointer to itself.
  Message self("a.test", kDnsA);
  const size_t at = self.bytes().size();
  self.bytes() += std::string("\xc0", 1) + static_cast<char>(at);
  self.bytes() += std::string("\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04", 10);
  self.bytes() += kTen;
  self.bytes()[7] = 1;
  absl::StatusOr<AddressRecords> r = self.Read();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("malformed DNS answer: a name"));
}

}  // namespace
}  // namespace mesh::internal
