// The daemon's workspace.* and snapshot.* methods (proto/PROTOCOL.md, "Workspaces"): each call asks the
// runtime's workspace registry (actors/workspaces/workspace_messages.hpp) as this
// connection's principal, "uid:<peer uid>", and answers when the registry does. A
// workspace belongs to its principal, not to the connection: a disconnect leaves it, and
// another connection of the same uid finds it again; another uid's is "not found".
#pragma once

#include <string>

#include "proto/daemon/client_replies.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"

namespace corral {

// Who this connection's peer is to the registry.
std::string connection_principal(connection_self self);

// Answers r when its method is a workspace or snapshot one; false when it is not (the
// caller goes on).
bool workspace_method(connection_self self, const rpc::request& r);

} // namespace corral
