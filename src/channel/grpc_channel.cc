#include "src/channel/grpc_channel.h"

#include <google/protobuf/descriptor.h>
#include <grpcpp/support/client_interceptor.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "src/base/mutex.h"
#include "src/channel/grpc_interceptors.h"

namespace mesh::internal {
namespace {

using grpc::experimental::ClientRpcInfo;

// Which methods' messages are protobuf messages: the generated stubs' are
// in the generated descriptor pool, a grpc::GenericStub's ByteBuffer calls
// usually are not (their receive buffer is no message to parse into).
class KnownMethods {
 public:
  bool Known(const char* method) {
    {
      MutexLock lock(&mu_);
      auto it = known_.find(method);
      if (it != known_.end()) return it->second;
    }
    // "/pkg.Service/Method" is "pkg.Service.Method" in the pool.
    std::string name = absl::StrReplaceAll(
        absl::string_view(method).substr(method[0] == '/' ? 1 : 0),
        {{"/", "."}});
    bool known =
        google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(
            name) != nullptr;
    MutexLock lock(&mu_);
    // Bounded: a process calls a fixed set of generated methods; a method
    // outside it is looked up again each time rather than remembered.
    if (known || known_.size() < 4096) known_.emplace(method, known);
    return known;
  }

 private:
  Mutex mu_;
  absl::flat_hash_map<std::string, bool> known_ ABSL_GUARDED_BY(mu_);
};

class MeshInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit MeshInterceptorFactory(std::shared_ptr<ChannelCore> core)
      : core_(std::move(core)) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      ClientRpcInfo* info) override {
    absl::Status refused;
    if (!known_.Known(info->method())) {
      refused = absl::UnimplementedError(absl::StrCat(
          "mesh: ", info->method(),
          " is no generated protobuf method linked into this program; a "
          "grpc::Channel from Mesh::NewGrpcChannel carries generated stubs' "
          "calls (use mesh::Channel::CallRaw for raw bytes)"));
    } else if (info->type() != ClientRpcInfo::Type::UNARY) {
      return NewStreamInterceptor(core_, info);
    }
    return NewUnaryInterceptor(core_, info, std::move(refused));
  }

 private:
  const std::shared_ptr<ChannelCore> core_;
  KnownMethods known_;
};

}  // namespace

std::shared_ptr<grpc::Channel> NewHijackingChannel(
    std::shared_ptr<ChannelCore> core) {
  std::vector<
      std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
      factories;
  factories.push_back(std::make_unique<MeshInterceptorFactory>(core));
  grpc::ChannelArguments args;
  // Every call is hijacked: the channel never resolves or connects. A
  // target of its own keeps gRPC from sharing anything with other channels.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      "passthrough:///mesh-hijacked." + core->target(),
      grpc::InsecureChannelCredentials(), args, std::move(factories));
}

}  // namespace mesh::internal
