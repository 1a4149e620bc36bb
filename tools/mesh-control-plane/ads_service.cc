#include "tools/mesh-control-plane/ads_service.h"

#include <grpc/grpc.h>

#include <cstdio>
#include <deque>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tools/mesh-control-plane/ads_stream.h"
#include "tools/mesh-control-plane/xds_resources.h"

namespace mesh::controlplane {
namespace {

namespace discovery = ::envoy::service::discovery::v3;

// Requests read ahead of the stream's handler; the reader waits beyond it.
constexpr size_t kInboxLimit = 16;
// Type URLs a stream names in a log line at most (one line each).
constexpr size_t kUnknownTypesLogged = 8;
// Streams served at once (each holds two threads); more are refused
// RESOURCE_EXHAUSTED.
constexpr int kMaxStreams = 1000;

void Log(const std::string& line) {
  std::fprintf(stderr, "mesh-control-plane: %s\n", line.c_str());
}

}  // namespace

void AdsService::Publish(const Config& config) {
  // One Publish at a time: each versions against the one before.
  internal::MutexLock publishing(&publish_mu_);
  XdsResourceSet resources = BuildXdsResources(config);
  std::shared_ptr<const XdsCatalog> previous = catalog();
  std::shared_ptr<const XdsCatalog> next =
      XdsCatalog::Next(previous.get(), std::move(resources));
  internal::MutexLock lock(&mu_);
  catalog_ = std::move(next);
  ++generation_;
}

void AdsService::Stop() {
  internal::MutexLock lock(&mu_);
  stopping_ = true;
}

std::shared_ptr<const XdsCatalog> AdsService::catalog() const {
  internal::MutexLock lock(&mu_);
  return catalog_;
}

int AdsService::open_streams() const {
  internal::MutexLock lock(&mu_);
  return open_streams_;
}

int64_t AdsService::nacks() const {
  internal::MutexLock lock(&mu_);
  return nacks_;
}

std::string AdsService::last_nack() const {
  internal::MutexLock lock(&mu_);
  return last_nack_;
}

int64_t AdsService::responses_sent(XdsType type) const {
  internal::MutexLock lock(&mu_);
  return counters_.responses[static_cast<int>(type)];
}

int64_t AdsService::resources_sent(XdsType type) const {
  internal::MutexLock lock(&mu_);
  return counters_.resources[static_cast<int>(type)];
}

grpc::Status AdsService::StreamAggregatedResources(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<discovery::DiscoveryResponse,
                             discovery::DiscoveryRequest>* stream) {
  int64_t id = 0;
  {
    internal::MutexLock lock(&mu_);
    if (stopping_) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          "control plane stopping");
    }
    if (open_streams_ >= kMaxStreams) {
      return grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrCat("control plane: ", kMaxStreams,
                       " ADS streams are open, the most it serves"));
    }
    id = ++next_stream_;
    ++open_streams_;
  }
  // Requests are read on a thread of their own and handed over here, so
  // that this thread can write a push while the client has nothing to say.
  // Guarded by mu_.
  struct Inbox {
    AdsService* service;
    std::deque<discovery::DiscoveryRequest> requests;
    bool reader_done = false;
    bool closing = false;
    int64_t seen_generation = -1;
  } inbox{this, {}, false, false, -1};
  auto read = [this, stream, &inbox] {
    discovery::DiscoveryRequest request;
    while (stream->Read(&request)) {
      internal::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](Inbox* in) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return in->requests.size() < kInboxLimit || in->closing ||
                   in->service->stopping_;
          },
          &inbox));
      if (inbox.closing || stopping_) break;
      inbox.requests.push_back(std::move(request));
      request.Clear();
    }
    internal::MutexLock lock(&mu_);
    inbox.reader_done = true;
  };
  std::thread reader;
  try {
    reader = std::thread(read);
  } catch (const std::system_error& e) {
    internal::MutexLock lock(&mu_);
    --open_streams_;
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        absl::StrCat("control plane: no thread for an ADS "
                                     "stream: ",
                                     e.what()));
  }

  AdsStream state(id);
  const std::string tag = absl::StrCat("ads stream ", id);
  std::set<std::string> unknown_types;
  grpc::Status result = grpc::Status::OK;
  bool client_done = false;
  int64_t answered_generation = -1;  // the catalog last looked at
  while (true) {
    std::deque<discovery::DiscoveryRequest> requests;
    std::shared_ptr<const XdsCatalog> catalog;
    int64_t generation = 0;
    {
      internal::MutexLock lock(&mu_);
      // The 1 s bound is only a safety net: every event wakes the wait.
      mu_.AwaitWithTimeout(absl::Condition(
                               +[](Inbox* in) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                 AdsService* s = in->service;
                                 return s->stopping_ || !in->requests.empty() ||
                                        in->reader_done ||
                                        s->generation_ != in->seen_generation;
                               },
                               &inbox),
                           absl::Seconds(1));
      if (stopping_) {
        result = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                              "control plane stopping");
        break;
      }
      requests.swap(inbox.requests);
      client_done = inbox.reader_done && requests.empty();
      catalog = catalog_;
      generation = generation_;
      inbox.seen_generation = generation_;
    }
    if (client_done) break;
    bool refused = false;
    for (const discovery::DiscoveryRequest& request : requests) {
      AdsRequestOutcome outcome = state.OnRequest(request);
      if (outcome.first_node) {
        Log(absl::StrCat(tag, " opened by node ", state.DescribeNode()));
      }
      if (verbose_) {
        Log(absl::StrCat(tag, " node=\"", state.NodeId(), "\" <- ",
                         outcome.description));
      }
      if (outcome.kind == AdsRequestOutcome::Kind::kTooManyNames) {
        Log(absl::StrCat(tag, " node=\"", state.NodeId(),
                         "\": ", outcome.description));
        result = grpc::Status(
            grpc::StatusCode::RESOURCE_EXHAUSTED,
            absl::StrCat("a request names more than ",
                         AdsStream::kMaxNamesPerRequest, " resources"));
        refused = true;
        break;
      }
      if (outcome.kind == AdsRequestOutcome::Kind::kNack && outcome.repeated) {
        // The same rejection again: logged and counted once.
      } else if (outcome.kind == AdsRequestOutcome::Kind::kNack) {
        std::string line =
            absl::StrCat("NACK from node \"", state.NodeId(), "\" on ", tag,
                         ": ", outcome.description);
        Log(line);
        internal::MutexLock lock(&mu_);
        ++nacks_;
        last_nack_ = std::move(line);
      } else if (outcome.kind == AdsRequestOutcome::Kind::kUnknownType &&
                 unknown_types.size() < kUnknownTypesLogged &&
                 unknown_types.insert(request.type_url()).second && !verbose_) {
        Log(absl::StrCat(tag, " node=\"", state.NodeId(),
                         "\": ", outcome.description));
      }
    }
    if (refused) break;
    // Nothing asked and no new catalog (the wait's safety net): nothing owed.
    if (catalog == nullptr ||
        (requests.empty() && generation == answered_generation)) {
      continue;
    }
    answered_generation = generation;
    bool written = true;
    for (const AdsResponse& response : state.Responses(*catalog)) {
      if (verbose_) {
        Log(absl::StrCat(tag, " node=\"", state.NodeId(), "\" -> ",
                         response.Describe()));
      }
      if (!stream->Write(response.message)) {
        written = false;
        break;
      }
      std::optional<XdsType> type = TypeOfUrl(response.message.type_url());
      internal::MutexLock lock(&mu_);
      ++counters_.responses[static_cast<int>(*type)];
      counters_.resources[static_cast<int>(*type)] +=
          response.message.resources_size();
    }
    if (!written) break;
  }
  {
    internal::MutexLock lock(&mu_);
    inbox.closing = true;
  }
  // The reader may be blocked in Read(): cancelling the call ends it. The
  // client gets the cancellation's status, not the one returned below:
  // when stopping, that must say so (TryCancel says CANCELLED).
  if (!result.ok()) {
    grpc_call_cancel_with_status(
        context->c_call(), static_cast<grpc_status_code>(result.error_code()),
        result.error_message().c_str(), nullptr);
  } else if (!client_done) {
    context->TryCancel();
  }
  reader.join();
  if (verbose_) Log(absl::StrCat(tag, " closed"));
  internal::MutexLock lock(&mu_);
  --open_streams_;
  return result;
}

}  // namespace mesh::controlplane
