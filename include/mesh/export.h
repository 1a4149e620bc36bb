// MESH_EXPORT marks what libmesh and libmesh_xds export: the public
// API. The libraries are built with hidden visibility, so a shared libmesh
// exports only what carries this mark (and what mesh's own libraries share,
// src/base/internal_export.h). A program that links the static libraries
// sees no difference.
//
//   class MESH_EXPORT Channel { ... };
//   MESH_EXPORT absl::Status ValidateEndpoint(const Endpoint& endpoint);
//
// A macro only; nothing to own or lock.
#ifndef MESH_EXPORT_H_
#define MESH_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define MESH_EXPORT __attribute__((visibility("default")))
#else
#define MESH_EXPORT
#endif

#endif  // MESH_EXPORT_H_
