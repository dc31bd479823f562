// A canonical streamer object (streamer_codec.h) as the settings message pushed to its node.
#pragma once

#include "meshwork/v1/types.pb.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

meshwork::v1::StreamerSettings StreamerToProto(const nlohmann::json& canonical);

}  // namespace meshwork::central
