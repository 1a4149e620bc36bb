// The admin page's files, embedded in the library: no build step and no
// fetch from elsewhere, so the page works on a machine without internet.
// admin.js reads /describe and /metrics every two seconds and /tap as
// server-sent events; it draws its plots on canvases itself.
#ifndef MESH_SRC_ADMIN_ADMIN_PAGE_H_
#define MESH_SRC_ADMIN_ADMIN_PAGE_H_

namespace mesh::internal {

extern const char kAdminHtml[];
extern const char kAdminJs[];
extern const char kAdminCss[];

}  // namespace mesh::internal

#endif  // MESH_SRC_ADMIN_ADMIN_PAGE_H_
