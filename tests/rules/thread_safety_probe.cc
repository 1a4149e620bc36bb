// Must NOT compile under clang's -Wthread-safety -Werror: it reads and writes
// a field guarded by a Mutex without holding it. scripts/test.sh compiles it
// to prove that the analysis of the library's build is on and sees
// src/base/mutex.h's annotations.
#include "src/base/mutex.h"

namespace {

class Counter {
 public:
  void Increment() { ++n_; }  // the lock is not held: an error
  int Get() {
    mesh::internal::MutexLock lock(&mu_);
    return n_;
  }

 private:
  mesh::internal::Mutex mu_;
  int n_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

int main() {
  Counter c;
  c.Increment();
  return c.Get();
}
