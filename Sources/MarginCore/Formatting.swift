import Foundation

/// ISO-8601 with milliseconds, UTC: "2026-11-21T19:53:55.123Z".
/// Milliseconds are truncated, as the database stores them, with a little slack for a value read
/// back as …883.9999 that is really …884: a date prints the same before and after a round trip.
public func isoDate(_ date: Date) -> String {
    let milliseconds = (date.timeIntervalSince1970 * 1000 + 0.001).rounded(.down)
    let exact = Date(timeIntervalSince1970: milliseconds / 1000 + 0.000_000_5)
    return exact.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
}

/// A URL fit to print or export: a user name and password in it, and the values of query
/// parameters that carry secrets (token, key, signature…), replaced by REDACTED. The library
/// keeps the URL whole, so the PDF can still be fetched again.
public func redactedURL(_ url: String) -> String {
    // Bytes, not Foundation's `contains`: a listing asks this of every source.
    guard url.utf8.contains(UInt8(ascii: "@")) || url.utf8.contains(UInt8(ascii: "?")),
        var parts = URLComponents(string: url)
    else { return url }
    var changed = false
    if parts.user != nil || parts.password != nil {
        parts.user = "REDACTED"
        parts.password = nil
        changed = true
    }
    if let items = parts.queryItems {
        let secret = [
            "token", "access_token", "auth", "authorization", "key", "apikey", "api_key", "password", "pass", "passwd",
            "secret",
            "sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token", "credential", "session",
            "sessionid",
        ]
        parts.queryItems = items.map { item in
            guard item.value != nil, secret.contains(item.name.lowercased()) else { return item }
            changed = true
            return URLQueryItem(name: item.name, value: "REDACTED")
        }
    }
    return changed ? (parts.string ?? url) : url
}
