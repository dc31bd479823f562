// The control channel's protocol version (C-1): a streamer sends it in Register, central
// refuses any other. The one definition for central, the streamer and the simulated nodes.
#pragma once

#include <cstdint>

namespace meshwork::v1 {

inline constexpr uint32_t kProtocolVersion = 1;

}  // namespace meshwork::v1
