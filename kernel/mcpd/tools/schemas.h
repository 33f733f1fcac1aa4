#pragma once
// Schema text shared by tools of several families.

namespace mcpd::tools {

constexpr const char* kNoArgs = R"({"type":"object","properties":{},"additionalProperties":false})";

} // namespace mcpd::tools
