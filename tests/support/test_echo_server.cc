#include "tests/support/test_echo_server.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/rpc/status.pb.h"
#include "src/tls/certificate_check.h"

namespace mesh::testing {

class TestEchoServer::Service final : public meshtest::TestEcho::Service {
 public:
  explicit Service(TestEchoServer* owner) : owner_(owner) {}

  grpc::Status Unary(grpc::ServerContext* context,
                     const meshtest::EchoRequest* request,
                     meshtest::EchoResponse* response) override {
    grpc::Status status = Begin(context, *request);
    if (!status.ok()) return status;
    response->set_message(request->message());
    response->set_served_by(owner_->address_);
    return grpc::Status::OK;
  }

  grpc::Status ServerStream(
      grpc::ServerContext* context, const meshtest::EchoRequest* request,
      grpc::ServerWriter<meshtest::EchoResponse>* writer) override {
    grpc::Status status = Begin(context, *request);
    if (!status.ok()) return status;
    for (int i = 0; i < request->responses(); ++i) {
      meshtest::EchoResponse response;
      response.set_message(request->message());
      response.set_served_by(owner_->address_);
      response.set_index(i);
      if (!writer->Write(response)) break;
    }
    return grpc::Status::OK;
  }

  grpc::Status ClientStream(grpc::ServerContext* context,
                            grpc::ServerReader<meshtest::EchoRequest>* reader,
                            meshtest::EchoResponse* response) override {
    owner_->calls_.fetch_add(1);
    Echo(context);
    meshtest::EchoRequest request;
    int count = 0;
    std::string all;
    while (reader->Read(&request)) {
      ++count;
      all += request.message();
    }
    response->set_message(all);
    response->set_served_by(owner_->address_);
    response->set_index(count);
    return grpc::Status::OK;
  }

  grpc::Status Bidi(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<meshtest::EchoResponse, meshtest::EchoRequest>*
          stream) override {
    owner_->calls_.fetch_add(1);
    Echo(context);
    meshtest::EchoRequest request;
    int i = 0;
    while (stream->Read(&request)) {
      if (!Wait(context, request.delay_ms())) {
        return grpc::Status(grpc::StatusCode::CANCELLED, "server saw cancel");
      }
      if (request.fail_code() != 0 && (request.fail_on().empty() ||
                                       request.fail_on() == owner_->address_)) {
        return Failure(context, request);
      }
      meshtest::EchoResponse response;
      response.set_message(request.message());
      response.set_served_by(owner_->address_);
      response.set_index(i++);
      if (!stream->Write(response)) break;
    }
    // A read that ends because the client cancelled counts as seen.
    if (context->IsCancelled()) owner_->cancellations_.fetch_add(1);
    return grpc::Status::OK;
  }

 private:
  // Counts the call, echoes its metadata, waits its delay and fails it as
  // asked; OK to go on.
  grpc::Status Begin(grpc::ServerContext* context,
                     const meshtest::EchoRequest& request) {
    owner_->calls_.fetch_add(1);
    Echo(context);
    if (!Wait(context, request.delay_ms())) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "server saw cancel");
    }
    if (request.fail_code() != 0 &&
        (request.fail_on().empty() || request.fail_on() == owner_->address_)) {
      return Failure(context, request);
    }
    return grpc::Status::OK;
  }

  // Waits `delay_ms` (a request's delay); false, counted, if the call is
  // cancelled meanwhile.
  bool Wait(grpc::ServerContext* context, int delay_ms) {
    const absl::Time until = absl::Now() + absl::Milliseconds(delay_ms);
    while (absl::Now() < until) {
      if (context->IsCancelled()) {
        owner_->cancellations_.fetch_add(1);
        return false;
      }
      absl::SleepFor(absl::Milliseconds(1));
    }
    return true;
  }

  void Echo(grpc::ServerContext* context) {
    std::shared_ptr<const grpc::AuthContext> auth =
        owner_->record_client_serials_ ? context->auth_context() : nullptr;
    if (auth != nullptr) {
      for (const grpc::string_ref& pem :
           auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME)) {
        absl::StatusOr<internal::CertificateFacts> cert =
            internal::ReadLeafCertificate(
                absl::string_view(pem.data(), pem.size()));
        if (cert.ok()) {
          internal::MutexLock lock(&owner_->mu_);
          owner_->client_serials_.push_back(cert->serial);
        }
      }
    }
    for (const auto& [key, value] : context->client_metadata()) {
      std::string k(key.data(), key.size());
      std::string v(value.data(), value.size());
      if (absl::StartsWith(k, "echo-")) context->AddInitialMetadata(k, v);
      if (absl::StartsWith(k, "trail-")) context->AddTrailingMetadata(k, v);
    }
  }

  static grpc::Status Failure(grpc::ServerContext* context,
                              const meshtest::EchoRequest& request) {
    (void)context;
    google::rpc::Status details;
    details.set_code(request.fail_code());
    details.set_message(request.fail_message());
    return grpc::Status(static_cast<grpc::StatusCode>(request.fail_code()),
                        request.fail_message(), details.SerializeAsString());
  }

  TestEchoServer* const owner_;
};

std::unique_ptr<TestEchoServer> TestEchoServer::Start(
    const EchoServerTls& tls) {
  std::unique_ptr<TestEchoServer> server(new TestEchoServer());
  server->service_ = std::make_unique<Service>(server.get());
  int port = 0;
  std::shared_ptr<grpc::ServerCredentials> credentials =
      grpc::InsecureServerCredentials();
  if (!tls.cert_chain.empty()) {
    grpc::SslServerCredentialsOptions ssl(
        tls.client_ca.empty()
            ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
            : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = tls.client_ca;
    ssl.pem_key_cert_pairs.push_back({tls.private_key, tls.cert_chain});
    credentials = grpc::SslServerCredentials(ssl);
    server->record_client_serials_ = tls.record_client_serials;
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", credentials, &port);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || port == 0) {
    std::fprintf(stderr, "TestEchoServer: cannot listen on 127.0.0.1\n");
    std::abort();
  }
  server->address_ = absl::StrCat("127.0.0.1:", port);
  return server;
}

TestEchoServer::~TestEchoServer() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
  }
}

std::vector<std::string> TestEchoServer::client_serials() const {
  internal::MutexLock lock(&mu_);
  return client_serials_;
}

}  // namespace mesh::testing
