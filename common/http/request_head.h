// The common request header read without Beast's parser (P-5, P-2).
//
// Almost every request a live origin answers is a GET (or HEAD) of a playlist or a media
// object, sent whole in one segment with a handful of plain fields. Beast's general parser
// costs about 1 400 instructions for such a header before its fields are stored; this reader
// takes only that common form, strictly, and hands everything else back to Beast: a header
// it returns 0 for is then parsed by Beast from the same bytes, so the two never disagree on
// where a request ends (no smuggling through a second parser). What it takes, Beast takes
// too and reads the same way (tests/fuzz/request_head_fuzz.cc checks that on any bytes).
//
// Taken (all of it, or 0 is returned):
//  - `GET` or `HEAD`, one SP, a target of 0x21–0x7E bytes, one SP, `HTTP/1.1` or `HTTP/1.0`,
//    CRLF;
//  - field lines `name: value` CRLF: the name of letters, digits and '-', the value of
//    0x20–0x7E bytes and HTAB with its leading and trailing SP/HTAB trimmed (as Beast does);
//    no line folded (a line starting with SP or HTAB), no other control byte, nothing
//    above 0x7E;
//  - none of the fields that change the framing or the connection's fate: Content-Length,
//    Transfer-Encoding, Upgrade, Proxy-Connection; a Connection field only as `keep-alive`
//    or `close` (any case);
//  - at most kMaxSimpleFields fields; the empty line that ends the header already in `bytes`,
//    and the whole header shorter than `header_limit` minus 8 (Beast judges those near it).
//
// Thread-safe: a pure function of its arguments.
#pragma once

#include <cstddef>
#include <string_view>

#include "boost/beast/http.hpp"

namespace meshwork::http {

inline constexpr size_t kMaxSimpleFields = 64;

// Reads one request header of the common form from the start of `bytes` into `out` (its
// fields cleared first; its body left empty) and returns the header's length in bytes,
// through its empty line. Returns 0 when `bytes` does not start with a whole header of that
// form; `out` is then unspecified (cleared or partly filled) and the caller parses `bytes`
// with Beast's parser instead.
size_t ReadSimpleRequestHead(std::string_view bytes, size_t header_limit,
                             boost::beast::http::request<boost::beast::http::string_body>& out);

}  // namespace meshwork::http
