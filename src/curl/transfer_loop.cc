#include "src/curl/transfer_loop.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace mesh::internal {

TransferLoop::TransferLoop()
    : multi_(curl_multi_init()), owner_(std::this_thread::get_id()) {}

TransferLoop::~TransferLoop() {
  for (auto& [easy, running] : running_) {
    curl_multi_remove_handle(multi_, easy);
  }
  running_.clear();
  // Closes the cached connections (CloseSocket runs for each).
  curl_multi_cleanup(multi_);
  for (auto& [address, list] : connect_to_) curl_slist_free_all(list);
}

void TransferLoop::Post(absl::AnyInvocable<void()> task) {
  {
    MutexLock lock(&mu_);
    tasks_.push_back(std::move(task));
    pending_.store(true, std::memory_order_release);
  }
  if (!OnLoopThread()) curl_multi_wakeup(multi_);
}

void TransferLoop::Start(CURL* easy, absl::Time deadline,
                         absl::AnyInvocable<void(CURLcode)> done) {
  // A handle in another multi handle (the application's own) cannot be
  // driven here: its transfer fails, at the loop's next turn.
  if (running_.count(easy) != 0 ||
      curl_multi_add_handle(multi_, easy) != CURLM_OK) {
    Post([done = std::move(done)]() mutable {
      done(CURLE_BAD_FUNCTION_ARGUMENT);
    });
    return;
  }
  running_[easy] = Running{std::move(done), deadline};
  if (deadline != absl::InfiniteFuture()) ++timed_;
}

void TransferLoop::Abort(CURL* easy, CURLcode code) {
  if (running_.find(easy) == running_.end()) return;
  // curl closes the connection at the transfer's end if no other transfer
  // uses it (it only resets the stream of one that is shared).
  curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
  curl_multi_remove_handle(multi_, easy);
  curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 0L);
  Finish(easy, code);
}

void TransferLoop::Finish(CURL* easy, CURLcode code) {
  auto it = running_.find(easy);
  if (it == running_.end()) return;
  // An h2c opener that ends before its connection was made (or with it)
  // releases its waiters.
  for (auto& [address, opening] : opening_) {
    if (opening.opener == easy) {
      curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, nullptr);
      curl_easy_setopt(easy, CURLOPT_PREREQDATA, nullptr);
      Opened(address);
      break;
    }
  }
  absl::AnyInvocable<void(CURLcode)> done = std::move(it->second.done);
  if (it->second.deadline != absl::InfiniteFuture()) --timed_;
  running_.erase(it);
  done(code);
}

bool TransferLoop::RunTasks() {
  if (!pending_.load(std::memory_order_acquire)) return false;
  {
    MutexLock lock(&mu_);
    turn_.swap(tasks_);
    pending_.store(false, std::memory_order_relaxed);
  }
  // A task may post more: they go to tasks_, for the next turn.
  for (auto& task : turn_) task();
  turn_.clear();
  return true;
}

void TransferLoop::RunUntil(absl::FunctionRef<bool()> stop, absl::Time until) {
  while (!stop()) {
    RunTasks();
    if (stop()) return;
    int still_running = 0;
    curl_multi_perform(multi_, &still_running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      const CURLcode code = msg->data.result;
      curl_multi_remove_handle(multi_, easy);
      Finish(easy, code);
    }
    const absl::Time next_deadline = ExpireDeadlines();
    if (stop()) return;
    const absl::Time now = absl::Now();
    if (now >= until) return;
    if (pending_.load(std::memory_order_acquire)) continue;
    const absl::Time wake = std::min(until, next_deadline);
    const int ms = static_cast<int>(
        std::clamp<int64_t>(absl::ToInt64Milliseconds(
                                absl::Ceil(wake - now, absl::Milliseconds(1))),
                            0, 1000));
    curl_multi_poll(multi_, nullptr, 0, ms, nullptr);
  }
}

absl::Time TransferLoop::ExpireDeadlines() {
  absl::Time next = absl::InfiniteFuture();
  if (timed_ == 0) return next;
  const absl::Time now = absl::Now();
  std::vector<CURL*> expired;
  for (const auto& [easy, running] : running_) {
    if (running.deadline <= now) {
      expired.push_back(easy);
    } else {
      next = std::min(next, running.deadline);
    }
  }
  for (CURL* easy : expired) Abort(easy, CURLE_OPERATION_TIMEDOUT);
  return next;
}

int TransferLoop::OpenConnections(const std::string& address) const {
  auto it = open_.find(address);
  return it == open_.end() ? 0 : it->second;
}

const curl_slist* TransferLoop::ConnectTo(const std::string& address) {
  auto it = connect_to_.find(address);
  if (it == connect_to_.end()) {
    curl_slist* list =
        curl_slist_append(nullptr, absl::StrCat("::", address).c_str());
    it = connect_to_.emplace(address, list).first;
  }
  return it->second;
}

void TransferLoop::TrackConnections(CURL* easy, const std::string& address) {
  auto [it, added] = openers_.try_emplace(address, Opener{this, address});
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &TransferLoop::OpenSocket);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, &it->second);
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION,
                   &TransferLoop::CloseSocket);
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, this);
}

TransferLoop::H2c TransferLoop::H2cFor(CURL* easy, const std::string& address) {
  // An entry exists while a transfer opens the endpoint's connection.
  if (!opening_.empty() && opening_.count(address) != 0) return H2c::kWait;
  if (OpenConnections(address) > 0) return H2c::kReuse;
  opening_[address].opener = easy;
  auto [it, added] = openers_.try_emplace(address, Opener{this, address});
  curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, &TransferLoop::Connected);
  curl_easy_setopt(easy, CURLOPT_PREREQDATA, &it->second);
  return H2c::kOpen;
}

void TransferLoop::AwaitH2c(const std::string& address,
                            absl::AnyInvocable<void()> ready) {
  opening_[address].waiting.push_back(std::move(ready));
}

int TransferLoop::Connected(void* clientp, char*, char*, int, int) {
  auto* opener = static_cast<Opener*>(clientp);
  opener->loop->Opened(opener->address);
  return CURL_PREREQFUNC_OK;
}

void TransferLoop::Opened(const std::string& address) {
  auto it = opening_.find(address);
  if (it == opening_.end()) return;
  std::vector<absl::AnyInvocable<void()>> waiting =
      std::move(it->second.waiting);
  opening_.erase(it);
  // At the next turn: not inside curl's callback, and after the opener's
  // connection is in curl's cache.
  for (auto& ready : waiting) Post(std::move(ready));
}

curl_socket_t TransferLoop::OpenSocket(void* clientp, curlsocktype purpose,
                                       curl_sockaddr* address) {
  const curl_socket_t fd =
      socket(address->family, address->socktype, address->protocol);
  if (fd == CURL_SOCKET_BAD || purpose != CURLSOCKTYPE_IPCXN) return fd;
  auto* opener = static_cast<Opener*>(clientp);
  TransferLoop* loop = opener->loop;
  loop->sockets_[fd] = opener->address;
  ++loop->open_[opener->address];
  return fd;
}

int TransferLoop::CloseSocket(void* clientp, curl_socket_t fd) {
  auto* loop = static_cast<TransferLoop*>(clientp);
  auto it = loop->sockets_.find(fd);
  if (it != loop->sockets_.end()) {
    auto count = loop->open_.find(it->second);
    if (count != loop->open_.end() && --count->second <= 0) {
      loop->open_.erase(count);
    }
    loop->sockets_.erase(it);
  }
  return close(fd);
}

}  // namespace mesh::internal
