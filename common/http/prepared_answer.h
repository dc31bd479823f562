// Answers rendered once and sent many times (P-5, P-3): a 404/410 storm, or thousands of
// viewers of one playlist revision, should not rebuild the same header fields and body for
// every request.
//
// A PreparedAnswer holds the status line, the header fields other than those a connection
// writes itself (Server, Date, Content-Length, Transfer-Encoding, Connection), already
// serialized, and the body. It is immutable once built: share it across threads freely.
// AnswerFields carries the few fields that change per request (a TTL, say) without an
// allocation. Both are built by our own code: a field name or value with CR, LF or NUL would
// split the header, so names and fixed text are checked at compile time (FieldName,
// FieldText), other values at run time (a crash in Add; TryAdd refuses a request's bytes).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/http/types.h"

namespace meshwork::http {

// Text of a header field written in our code (a string literal), checked when the program is
// compiled: a literal with CR, LF or NUL does not compile (the check throws in a constant
// evaluation). The per-request path then checks only what it cannot know beforehand.
class FieldText {
 public:
  template <size_t N>
  consteval FieldText(const char (&text)[N]) : text_(text, N - 1) {  // NOLINT: implicit
    for (char c : text_) {
      if (c == '\r' || c == '\n' || c == '\0') throw "a prepared field's text holds CR, LF or NUL";
    }
  }
  constexpr std::string_view view() const { return text_; }

 private:
  std::string_view text_;
};

// A header field's name written in our code: FieldText, not empty, without ':' or spaces.
class FieldName {
 public:
  template <size_t N>
  consteval FieldName(const char (&name)[N]) : name_(name) {  // NOLINT: implicit
    if (N < 2) throw "an empty prepared field name";
    for (char c : name_.view()) {
      if (c == ':' || c == ' ' || c == '\t') throw "a prepared field name holds ':' or a space";
    }
  }
  constexpr std::string_view view() const { return name_.view(); }

 private:
  FieldText name_;
};

// Header fields of one answer, serialized "Name: value\r\n" into a fixed buffer.
class AnswerFields {
 public:
  static constexpr size_t kCapacity = 512;
  // Appends one field. Crashes when the field does not fit or `value` holds CR, LF or NUL (our
  // code's bug: values from requests go through TryAdd).
  void Add(FieldName name, std::string_view value);
  // `prefix` then `value` in decimal: Add("Cache-Control", "max-age=", 5). Nothing in it is
  // checked per call but the room (the digits are clean, the rest was checked at compile
  // time).
  void Add(FieldName name, FieldText prefix, int64_t value);
  // Appends one field whose value may come from a request (a URL with its query): false, and
  // nothing appended, when it does not fit or holds CR, LF or NUL — the caller then answers
  // another way.
  bool TryAdd(FieldName name, std::string_view value);
  std::string_view view() const { return {bytes_.data(), size_}; }

 private:
  // Appends "name: " + `a` + `b` + CRLF; crashes past the capacity.
  void Append(std::string_view name, std::string_view a, std::string_view b = {});

  std::array<char, kCapacity> bytes_;  // the first size_ bytes are the fields
  size_t size_ = 0;
};

class PreparedAnswer {
 public:
  // Takes `response`'s status, fields (the session's own dropped) and body.
  explicit PreparedAnswer(Response response);
  // The same with a shared body instead of `header`'s own (a rendering many answers hold).
  PreparedAnswer(Response header, std::shared_ptr<const std::string> body);
  PreparedAnswer(const PreparedAnswer&) = delete;  // body_ may point into the object
  PreparedAnswer& operator=(const PreparedAnswer&) = delete;

  unsigned status() const { return status_; }
  std::string_view body() const { return body_; }
  // Whether the status carries no body and no framing field (1xx, 204, 304).
  bool bodiless() const { return status_ < 200 || status_ == 204 || status_ == 304; }

  // Appends the whole HTTP/1.1 header: the status line and fields, `extra`, Server, `date`,
  // Content-Length (the body's, for HEAD too; none when bodiless) and `Connection: close`
  // unless `keep`.
  void AppendHead(std::string_view extra, std::string_view date, bool keep, std::string& out) const;
  // The same answer as a Response with `extra` added (for transports that need one: h2);
  // without its body when `with_body` is false (Content-Length still the body's).
  Response ToResponse(std::string_view extra, bool with_body = true) const;
  // The shared body, or null when the answer owns its body.
  const std::shared_ptr<const std::string>& shared_body() const { return shared_body_; }

 private:
  unsigned status_;
  std::string head_;     // "HTTP/1.1 NNN Reason\r\n" and the fields, each line with CRLF
  std::string framing_;  // CRLF ending the Date line, then the framing field if any (AppendFraming)
  std::shared_ptr<const std::string> shared_body_;  // the body when shared, else null
  std::string own_body_;
  std::string_view body_;  // into one of the two
  Response fields_;        // the same fields for ToResponse (its body empty)
};

// Sends `answer` through `target`'s Response interface (Responder::Sink and SessionBase
// both have it): a shared body as a scatter-gather body, not copied; an owned one inside the
// Response.
template <typename Target>
void CompleteAsResponse(Target& target, const PreparedAnswer& answer, std::string_view extra) {
  if (const auto& body = answer.shared_body(); body && !answer.bodiless()) {
    SharedBuffers buffers;
    buffers.Append(body);
    target.CompleteBuffers(answer.ToResponse(extra, false), std::move(buffers), 0, body->size());
    return;
  }
  target.Complete(answer.ToResponse(extra));
}

namespace head_internal {
// Fields a connection writes itself; a handler's own are dropped.
bool SessionField(beast_http::field f);
// Appends "HTTP/1.1 NNN Reason\r\n" and `head`'s fields other than the session's own.
void AppendStatusAndFields(const beast_http::response_header<>& head, std::string& out);
// Appends Server, Date, the framing field for `code` (Content-Length when `content_length`,
// else chunked; neither for 1xx, 204 and 304), `Connection: close` unless `keep`, and the
// blank line that ends the header.
void AppendSessionFields(unsigned code, std::string_view date,
                         std::optional<uint64_t> content_length, bool keep, std::string& out);
// The part of AppendSessionFields from the end of the Date line through the framing field.
void AppendFraming(unsigned code, std::optional<uint64_t> content_length, std::string& out);
}  // namespace head_internal

}  // namespace meshwork::http
