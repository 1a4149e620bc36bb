#include "bench/e2e/grpc_caller.h"

#include <grpcpp/generic/generic_stub.h>

#include <utility>

namespace mesh::bench {

GrpcCaller::GrpcCaller(const std::string& target, const std::string& policy,
                       absl::Duration timeout)
    : timeout_(timeout) {
  grpc::ChannelArguments args;
  args.SetLoadBalancingPolicyName(policy);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  channel_ = grpc::CreateCustomChannel(
      target, grpc::InsecureChannelCredentials(), args);
}

void GrpcCaller::Start(std::function<void(bool)> done) {
  struct Call {
    grpc::ClientContext context;
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
  };
  auto* call = new Call;
  call->context.set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
  grpc::Slice slice(std::string(64, 'x'));
  call->request = grpc::ByteBuffer(&slice, 1);
  grpc::GenericStub stub(channel_);
  stub.UnaryCall(&call->context, kBenchMethod, grpc::StubOptions(),
                 &call->request, &call->response,
                 [call, done = std::move(done)](grpc::Status status) {
                   done(status.ok());
                   delete call;
                 });
}

}  // namespace mesh::bench
