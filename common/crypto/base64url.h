// Base64url (RFC 4648 §5): the URL- and filename-safe alphabet, written without padding.

#ifndef MESHWORK_COMMON_CRYPTO_BASE64URL_H_
#define MESHWORK_COMMON_CRYPTO_BASE64URL_H_

#include <optional>
#include <string>
#include <string_view>

namespace meshwork::crypto {

// Any bytes → base64url text without '=' padding.
std::string Base64UrlEncode(std::string_view bytes);

// Base64url text (unpadded, or padded to a multiple of 4 with one or two '=') → bytes.
// nullopt for a character outside the alphabet, a length no encoding produces (4k+1, or a
// padded text whose length is not a multiple of 4), misplaced or excess '=', or unused
// trailing bits that are not zero (so every accepted text is the canonical encoding of its
// bytes, give or take padding).
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace meshwork::crypto

#endif  // MESHWORK_COMMON_CRYPTO_BASE64URL_H_
