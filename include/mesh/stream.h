// ClientStream: one streaming call (server-, client- or bidi-streaming)
// through a Channel, in the style of gRPC's callback reactors.
//
//   class Chat : public mesh::StreamObserver {
//     void OnReadDone(bool ok, std::string message) override { /* … */ }
//     void OnClose(const mesh::CallResult& result) override { /* … */ }
//   };
//   Chat chat;
//   std::unique_ptr<mesh::ClientStream> s =
//       channel->StartStream("/chat.Room/Talk", {}, &chat);
//   s->Write(serialized);  // the next Write after OnWriteDone
//   s->Read();             // the next Read after OnReadDone
//   s->WritesDone();
//
// A stream is routed like a call (its route's timeout is its deadline) and
// picks one endpoint, which counts it as pending for the stream's life; its
// time to the first response (headers or message) is the endpoint's latency
// sample. It is retried, on the route's retry policy, only if it failed
// before anything was received (the messages written so far are replayed,
// up to 64 KiB). Tap shows it as one request; metrics count it once.
//
// Thread-safe. The observer must live until its OnClose has returned.
#ifndef MESH_STREAM_H_
#define MESH_STREAM_H_

#include <memory>
#include <string>

#include "mesh/export.h"
#include "mesh/transport.h"

namespace mesh {

struct CallResult;

namespace internal {
class StreamCall;
}

// A stream's events. OnReadDone and OnWriteDone may run at the same time on
// different threads (as gRPC's reactions), and so may OnHeaders with the
// first OnReadDone(true); OnClose comes once, last, after every other has
// returned, and after the messages already received have been read (a
// stream cancelled, or past its deadline, drops them). They run on mesh or gRPC
// threads — OnReadDone also inside Read when a message is already waiting — and
// must not block.
class MESH_EXPORT StreamObserver {
 public:
  virtual ~StreamObserver() = default;
  // The server's initial metadata, once; not at all if it sent none.
  virtual void OnHeaders(const Metadata& headers) { (void)headers; }
  // The answer to one Read: a message (ok), or none (!ok): the stream has
  // ended, and OnClose follows.
  virtual void OnReadDone(bool ok, std::string message) = 0;
  // The answer to one Write: sent (ok), or the stream is over (!ok).
  virtual void OnWriteDone(bool ok) { (void)ok; }
  // The end: the status (the server's, or the mesh's as for a call), the
  // metadata and the endpoint; `body` is empty.
  virtual void OnClose(const CallResult& result) = 0;
};

class MESH_EXPORT ClientStream {
 public:
  // Cancels the stream if it has not closed; OnClose still comes.
  ~ClientStream();
  ClientStream(const ClientStream&) = delete;
  ClientStream& operator=(const ClientStream&) = delete;

  // Sends one message (serialized, no framing). One at a time: the next
  // after OnWriteDone. False when the stream is over (or WritesDone was
  // called): nothing is sent and no OnWriteDone follows.
  bool Write(std::string message);
  // No more messages from the client (its half-close).
  void WritesDone();
  // Asks for the next message. One at a time: the next after OnReadDone.
  // Read until OnReadDone(false): as with gRPC, the stream's end waits for
  // the messages it received to be read.
  void Read();
  // Ends the stream CANCELLED, telling the server if it was open.
  void Cancel();

 private:
  friend class Channel;
  explicit ClientStream(std::shared_ptr<internal::StreamCall> call);
  std::shared_ptr<internal::StreamCall> call_;
};

}  // namespace mesh

#endif  // MESH_STREAM_H_
