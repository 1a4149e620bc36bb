// Metrics: what Mesh::Metrics() exposes, in the Prometheus text exposition
// format 0.0.4 (serve it as `text/plain; version=0.0.4`). This header is the
// reference of the names and labels; it declares nothing else. Label names
// follow linkerd2-proxy's where it has one, so Linkerd dashboards and
// queries carry over.
//
//   std::string text = mesh->Metrics();   // scrape, or log, this
//
// Labels:
//   authority       the channel's target, as passed to NewChannel
//   route           the route's name; "[default]" for the implicit default
//                   route (calls no configured route matched)
//   endpoint        the endpoint's address, "host:port"
//   classification  "success" or "failure", the response class of the call
//   grpc_status     the final gRPC status code as a number ("0" … "16");
//                   "" for a number outside 0..16
//   le              a latency bucket's upper bound in milliseconds
//   reason          why a retry was skipped: "budget" or "max_attempts"
//
// Route families (a route's counters exist, at 0, once a destination in use
// has the route; they outlive config changes that keep its name; a response
// series appears once its count is non-zero):
//   route_request_total{authority,route}                      counter
//       logical calls
//   route_actual_request_total{authority,route}               counter
//       attempts, retries included
//   route_response_total{authority,route,classification,grpc_status}
//                                                             counter
//       calls that ended, by their final status
//   route_response_latency_ms{authority,route}                histogram
//       whole-call latency, retries included; buckets le = 1, 2, 3, 4, 5,
//       10, 20, 30, 40, 50, 100, 200, 300, 400, 500, 1000, 2000, 3000,
//       4000, 5000, 10000, 20000, 30000, 40000, 50000, +Inf
//       (route_response_latency_ms_bucket / _sum / _count)
//   route_retry_total{authority,route}                        counter
//   route_retry_skipped_total{authority,route,reason}         counter
//       retries the route allowed but the budget or max attempts refused
//   route_timeout_total{authority,route}                      counter
//       calls that ended DEADLINE_EXCEEDED
//
// Endpoint families. endpoint_request_total and endpoint_response_total
// appear at an endpoint's first attempt (none for an endpoint never called,
// so that large idle sets cost no memory) and go when it leaves its
// destination's endpoint set; the balancer's gauges and
// endpoint_ejections_total exist for every endpoint in the set:
//   endpoint_request_total{authority,endpoint}                counter
//       attempts sent to the endpoint
//   endpoint_response_total{authority,endpoint,classification,grpc_status}
//                                                             counter
//       attempts that ended, by status
//   endpoint_ejections_total{authority,endpoint}              counter
//       times ejected, summed over the channels to the authority
//   endpoint_ejected{authority,endpoint}                      gauge
//       1 while any channel has the endpoint ejected, else 0
//   endpoint_pending{authority,endpoint}                      gauge
//       calls in flight, summed over channels
//   endpoint_rtt_estimate_ms{authority,endpoint}              gauge
//       the balancer's Peak-EWMA estimate, the largest over channels
//
// Families and series are written in sorted order. Recording is lock-free
// and allocation-free on the call path; Mesh::Metrics() is thread-safe.
#ifndef MESH_METRICS_H_
#define MESH_METRICS_H_

namespace mesh {
// See Mesh::Metrics().
}  // namespace mesh

#endif  // MESH_METRICS_H_
