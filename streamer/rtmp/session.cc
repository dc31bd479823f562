#include "streamer/rtmp/session.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "streamer/rtmp/handshake.h"

namespace meshwork::rtmp {
namespace {

constexpr uint32_t kControlChunkStream = 2;
constexpr uint32_t kCommandChunkStream = 3;
constexpr size_t kMaxNotices = 32;
// A publish name (stream, and its key after '?' or '-') longer than this is refused before
// anything looks it up: names are echoed in replies and logs, and the key split tries its
// prefixes.
constexpr size_t kMaxPublishName = 1024;
// Texts from the peer that go back to it (onStatus descriptions) or into notices are cut
// here, so no reply the server frames comes near RTMP's 2^24-byte message limit.
constexpr size_t kMaxEchoedText = 512;

std::string Clipped(std::string_view text) {
  if (text.size() <= kMaxEchoedText) return std::string(text);
  return absl::StrCat(std::string(text.substr(0, kMaxEchoedText)), "… (", text.size(), " bytes)");
}

std::string Be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}
uint32_t ReadBe32(const std::string& s) {
  if (s.size() < 4) return 0;
  auto b = [&](int i) { return uint32_t{static_cast<uint8_t>(s[i])}; };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}
Amf0Value Info(const std::string& level, const std::string& code, const std::string& text) {
  return Amf0Value::Object({{"level", Amf0Value::String(level)},
                            {"code", Amf0Value::String(code)},
                            {"description", Amf0Value::String(Clipped(text))}});
}

}  // namespace

void SplitStreamKey(std::string_view name, const std::function<bool(std::string_view)>& is_stream,
                    std::string& stream, std::string& token) {
  token.clear();
  if (size_t q = name.find('?'); q != std::string_view::npos) {
    stream.assign(name.substr(0, q));
    std::string_view query = name.substr(q + 1);
    while (!query.empty()) {
      size_t amp = query.find('&');
      std::string_view pair = query.substr(0, amp);
      if (pair.substr(0, 6) == "token=") token.assign(pair.substr(6));
      if (amp == std::string_view::npos) break;
      query.remove_prefix(amp + 1);
    }
    return;
  }
  stream.assign(name);
  if (is_stream(name)) return;
  for (size_t dash = name.rfind('-'); dash != std::string_view::npos && dash > 0;
       dash = name.rfind('-', dash - 1)) {
    if (is_stream(name.substr(0, dash))) {
      stream.assign(name.substr(0, dash));
      token.assign(name.substr(dash + 1));
      return;
    }
  }
}

namespace {
// The pre-publish limits, none above the publishing ones.
ChunkLimits BeforePublish(const ServerSession::Options& o) {
  return ChunkLimits{
      .max_chunk_size = std::min(o.before_publish.max_chunk_size, o.limits.max_chunk_size),
      .max_message_size = std::min(o.before_publish.max_message_size, o.limits.max_message_size),
      .max_chunk_streams = std::min(o.before_publish.max_chunk_streams, o.limits.max_chunk_streams),
      .max_buffered_bytes =
          std::min(o.before_publish.max_buffered_bytes, o.limits.max_buffered_bytes)};
}
}  // namespace

ServerSession::ServerSession(Options options, Handler handler, RandomFill random, uint32_t epoch_ms)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      random_(std::move(random)),
      epoch_ms_(epoch_ms),
      reader_(BeforePublish(options_)) {}

ServerSession::~ServerSession() { StopPublishing(); }

absl::Status ServerSession::Feed(std::span<const uint8_t> in, std::string& out) {
  auto take_handshake = [&](size_t want) {
    const size_t n = std::min(want - handshake_.size(), in.size());
    handshake_.append(reinterpret_cast<const char*>(in.data()), n);
    in = in.subspan(n);
    return handshake_.size() == want;
  };
  if (phase_ == Phase::kC0C1 && take_handshake(1 + kHandshakeSize)) {
    std::vector<uint8_t> random(kHandshakeSize);
    random_(random);
    auto answer = AnswerHandshake(
        std::span(reinterpret_cast<const uint8_t*>(handshake_.data()), handshake_.size()),
        epoch_ms_, random);
    if (!answer.ok()) return answer.status();
    out += answer->s0s1s2;
    handshake_.clear();
    phase_ = Phase::kC2;
  }
  if (phase_ == Phase::kC2 && take_handshake(kHandshakeSize)) {
    std::string().swap(handshake_);
    phase_ = Phase::kChunks;
  }
  if (phase_ != Phase::kChunks || in.empty()) return absl::OkStatus();
  // Each message is handled as it completes: a publish admitted by one raises the limits
  // for the next.
  if (auto s = reader_.Feed(in, [&](Message& m) { return OnMessage(m, out); }); !s.ok()) {
    return s;
  }
  if (reader_.bytes_read() - acked_ >= peer_window_) {
    acked_ = reader_.bytes_read();
    SendControl(kAcknowledgement, Be32(static_cast<uint32_t>(acked_)), out);
  }
  return absl::OkStatus();
}

absl::Status ServerSession::OnMessage(Message& m, std::string& out) {
  switch (m.type) {
    case kWindowAckSize:
      if (uint32_t w = ReadBe32(m.payload); w > 0) peer_window_ = w;
      return absl::OkStatus();
    case kCommandAmf3:  // an AMF0 command behind a format byte
      if (m.payload.empty()) return absl::OkStatus();
      m.payload.erase(0, 1);
      [[fallthrough]];
    case kCommandAmf0: {
      auto values = DecodeAmf0(
          std::span(reinterpret_cast<const uint8_t*>(m.payload.data()), m.payload.size()));
      if (!values.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("undecodable command: ", values.status().message()));
      }
      return OnCommand(*values, m.stream_id, out);
    }
    case kAudio:
    case kVideo:
    case kAggregate:
      break;
    default:  // acknowledgements, bandwidth, user control, metadata (@setDataFrame)
      return absl::OkStatus();
  }
  if (!publishing_ || m.stream_id != publish_stream_id_) return absl::OkStatus();
  auto media = [&](uint8_t type, uint32_t timestamp, std::span<const uint8_t> body) {
    ++media_messages_;
    absl::Status s = type == kAudio ? depacketizer_->OnAudio(timestamp, body)
                                    : depacketizer_->OnVideo(timestamp, body);
    if (!s.ok()) Notice(std::string(s.message()));  // the message is dropped, the stream goes on
  };
  const auto* p = reinterpret_cast<const uint8_t*>(m.payload.data());
  if (m.type != kAggregate) {
    media(m.type, m.timestamp, std::span(p, m.payload.size()));
    return absl::OkStatus();
  }
  // Aggregate: FLV tags (11-byte header, body, 4-byte back pointer); their timestamps are
  // moved so the first one lands on the message's.
  std::optional<uint32_t> first;
  for (size_t at = 0; at + 11 <= m.payload.size();) {
    const uint8_t type = p[at] & 0x1f;
    const size_t size = (p[at + 1] << 16) | (p[at + 2] << 8) | p[at + 3];
    const uint32_t ts =
        (uint32_t{p[at + 7]} << 24) | (p[at + 4] << 16) | (p[at + 5] << 8) | p[at + 6];
    if (size + 15 > m.payload.size() - at) {
      Notice("aggregate message with a truncated tag");
      break;
    }
    if (!first) first = ts;
    if (type == kAudio || type == kVideo) {
      media(type, m.timestamp + (ts - *first), std::span(p + at + 11, size));
    }
    at += 11 + size + 4;
  }
  return absl::OkStatus();
}

absl::Status ServerSession::OnCommand(const std::vector<Amf0Value>& args, uint32_t stream_id,
                                      std::string& out) {
  if (args.empty() || args[0].type != Amf0Value::Type::kString) {
    return absl::InvalidArgumentError("a command message without a command name");
  }
  const std::string& name = args[0].string;
  const double txn =
      args.size() > 1 && args[1].type == Amf0Value::Type::kNumber ? args[1].number : 0;
  if (name == "connect") return OnConnect(txn, args, out);
  if (!connected_) return absl::FailedPreconditionError(absl::StrCat(name, " before connect"));
  if (name == "createStream") {
    if (streams_created_ >= options_.max_streams) {
      return absl::ResourceExhaustedError(
          absl::StrCat("more than ", options_.max_streams, " streams on one connection"));
    }
    ++streams_created_;
    const uint32_t id = next_stream_id_++;
    SendCommand(0,
                {Amf0Value::String("_result"), Amf0Value::Number(txn), Amf0Value::Null(),
                 Amf0Value::Number(id)},
                out);
    return absl::OkStatus();
  }
  if (name == "publish") return OnPublish(txn, args, stream_id, out);
  if (name == "deleteStream" || name == "closeStream" || name == "FCUnpublish") {
    StopPublishing();
  } else if (name == "play" || name == "play2") {
    SendStatus(stream_id, "error", "NetStream.Play.Failed",
               "this server takes publishing only; play over HLS or DASH", out);
    return absl::FailedPreconditionError("play is not served over RTMP");
  } else if (name != "releaseStream" && name != "FCPublish" && name != "getStreamLength" &&
             name != "_checkbw") {
    Notice(absl::StrCat("ignored command ", Clipped(name)));
    return absl::OkStatus();
  }
  if (txn > 0) {
    SendCommand(0, {Amf0Value::String("_result"), Amf0Value::Number(txn), Amf0Value::Null()}, out);
  }
  return absl::OkStatus();
}

absl::Status ServerSession::OnConnect(double txn, const std::vector<Amf0Value>& args,
                                      std::string& out) {
  if (connected_) return absl::InvalidArgumentError("connect sent twice");
  const Amf0Value none = Amf0Value::Null();
  const Amf0Value& command = args.size() > 2 ? args[2] : none;
  app_ = command.StringOr("app", "");
  app_ = app_.substr(0, app_.find('?'));
  while (!app_.empty() && app_.back() == '/') app_.pop_back();
  tc_url_ = command.StringOr("tcUrl", "");
  if (app_ != options_.app) {
    const std::string why =
        absl::StrCat("application \"", Clipped(app_), "\" is not served here (publish to \"",
                     options_.app, "\")");
    SendCommand(0,
                {Amf0Value::String("_error"), Amf0Value::Number(txn), Amf0Value::Null(),
                 Info("error", "NetConnection.Connect.Rejected", why)},
                out);
    return absl::NotFoundError(why);
  }
  SendControl(kWindowAckSize, Be32(options_.window_ack_size), out);
  SendControl(kSetPeerBandwidth, Be32(options_.window_ack_size) + std::string(1, '\2'), out);
  SendControl(kSetChunkSize, Be32(options_.out_chunk_size), out);
  writer_.set_chunk_size(options_.out_chunk_size);
  Amf0Value info = Info("status", "NetConnection.Connect.Success", "Connection succeeded.");
  info.properties.emplace_back("objectEncoding", Amf0Value::Number(0));
  SendCommand(0,
              {Amf0Value::String("_result"), Amf0Value::Number(txn),
               Amf0Value::Object({{"fmsVer", Amf0Value::String("FMS/3,0,1,123")},
                                  {"capabilities", Amf0Value::Number(31)}}),
               std::move(info)},
              out);
  connected_ = true;
  return absl::OkStatus();
}

absl::Status ServerSession::OnPublish(double, const std::vector<Amf0Value>& args,
                                      uint32_t stream_id, std::string& out) {
  if (publishing_) return absl::InvalidArgumentError("publish sent twice on one connection");
  if (stream_id == 0 || stream_id >= next_stream_id_) {
    return absl::InvalidArgumentError(
        absl::StrCat("publish on message stream ", stream_id, ", which createStream did not make"));
  }
  std::string name;
  if (args.size() > 3 && args[3].type == Amf0Value::Type::kString) name = args[3].string;
  if (name.empty()) {
    SendStatus(stream_id, "error", "NetStream.Publish.BadName", "publish without a stream name",
               out);
    return absl::InvalidArgumentError("publish without a stream name");
  }
  if (name.size() > kMaxPublishName) {
    const std::string why = absl::StrCat("publish name of ", name.size(),
                                         " bytes (stream and key): at most ", kMaxPublishName);
    SendStatus(stream_id, "error", "NetStream.Publish.BadName", why, out);
    return absl::InvalidArgumentError(why);
  }
  request_ = PublishRequest{app_, tc_url_, name, "", ""};
  auto sink = handler_.on_publish(request_);
  if (!sink.ok()) {
    const bool denied =
        absl::IsUnauthenticated(sink.status()) || absl::IsPermissionDenied(sink.status());
    SendStatus(stream_id, "error",
               denied ? "NetStream.Publish.Denied" : "NetStream.Publish.BadName",
               std::string(sink.status().message()), out);
    return sink.status();
  }
  depacketizer_ = std::make_unique<FlvDepacketizer>(std::move(*sink));
  reader_.set_limits(options_.limits);
  publishing_ = true;
  publish_stream_id_ = stream_id;
  SendControl(kUserControl, std::string(2, '\0') + Be32(stream_id), out);  // StreamBegin
  SendStatus(stream_id, "status", "NetStream.Publish.Start",
             absl::StrCat(request_.stream, " is now published."), out);
  return absl::OkStatus();
}

void ServerSession::SendControl(uint8_t type, std::string payload, std::string& out) {
  writer_.Write(Message{kControlChunkStream, type, 0, 0, std::move(payload)}, out);
}

void ServerSession::SendCommand(uint32_t stream_id, const std::vector<Amf0Value>& values,
                                std::string& out) {
  std::string payload;
  for (const Amf0Value& v : values) EncodeAmf0(v, payload);
  writer_.Write(Message{kCommandChunkStream, kCommandAmf0, stream_id, 0, std::move(payload)}, out);
}

void ServerSession::SendStatus(uint32_t stream_id, const std::string& level,
                               const std::string& code, const std::string& description,
                               std::string& out) {
  SendCommand(stream_id,
              {Amf0Value::String("onStatus"), Amf0Value::Number(0), Amf0Value::Null(),
               Info(level, code, description)},
              out);
}

void ServerSession::Notice(const std::string& raw) {
  const std::string text = Clipped(raw);
  if (notices_.size() >= kMaxNotices ||
      std::find(notices_.begin(), notices_.end(), text) != notices_.end()) {
    return;
  }
  notices_.push_back(text);
  if (handler_.on_notice) handler_.on_notice(text);
}

void ServerSession::StopPublishing() {
  if (!publishing_) return;
  publishing_ = false;
  depacketizer_.reset();
  // Back to the limits of a connection that is not publishing (a publish raised them).
  reader_.set_limits(BeforePublish(options_));
  if (handler_.on_unpublish) handler_.on_unpublish();
}

}  // namespace meshwork::rtmp
