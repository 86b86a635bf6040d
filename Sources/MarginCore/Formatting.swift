import Foundation

/// ISO-8601 with milliseconds, UTC: "2026-11-21T19:53:55.123Z".
/// Milliseconds are truncated, as the database stores them, with a little slack for a value read
/// back as …883.9999 that is really …884: a date prints the same before and after a round trip.
public func isoDate(_ date: Date) -> String {
    let milliseconds = (date.timeIntervalSince1970 * 1000 + 0.001).rounded(.down)
    // From 1970 to 2099 written out here: Foundation's formatter costs ~6,700 instructions a
    // date, and a listing writes two or three a book. Other dates go through it (where a
    // Double's seconds lose the nudge below, it may print a millisecond less).
    if milliseconds >= 0, milliseconds < 4_102_444_800_000 {
        return isoDate(milliseconds: Int64(milliseconds))
    }
    let exact = Date(timeIntervalSince1970: milliseconds / 1000 + 0.000_000_5)
    return exact.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
}

/// "yyyy-MM-ddTHH:mm:ss.SSSZ" for milliseconds since 1970 (0 to 9999's end), in the Gregorian
/// calendar (days to a civil date as in Howard Hinnant's `civil_from_days`).
private func isoDate(milliseconds: Int64) -> String {
    let seconds = milliseconds / 1_000
    let days = seconds / 86_400
    let time = seconds % 86_400
    let shifted = days + 719_468
    let era = shifted / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthFromMarch = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
    let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    var text = [UInt8]()
    text.reserveCapacity(24)
    func digits(_ value: Int64, _ count: Int, then separator: UInt8) {
        var divisor: Int64 = 1
        for _ in 1..<count { divisor *= 10 }
        while divisor > 0 {
            text.append(UInt8(truncatingIfNeeded: 0x30 + (value / divisor) % 10))
            divisor /= 10
        }
        text.append(separator)
    }
    digits(year, 4, then: UInt8(ascii: "-"))
    digits(month, 2, then: UInt8(ascii: "-"))
    digits(day, 2, then: UInt8(ascii: "T"))
    digits(time / 3_600, 2, then: UInt8(ascii: ":"))
    digits(time / 60 % 60, 2, then: UInt8(ascii: ":"))
    digits(time % 60, 2, then: UInt8(ascii: "."))
    digits(milliseconds % 1_000, 3, then: UInt8(ascii: "Z"))
    return String(decoding: text, as: UTF8.self)
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

/// A UUID as `uuid.uuidString.lowercased()` writes it ("0f1e…-…"), from its bytes: Foundation
/// builds the string through a C buffer and a bridge (~6,700 instructions, once a book listed).
public func lowercasedString(of uuid: UUID) -> String {
    var text = [UInt8]()
    text.reserveCapacity(36)
    withUnsafeBytes(of: uuid.uuid) { bytes in
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            appendHex(byte, to: &text)
        }
    }
    return String(decoding: text, as: UTF8.self)
}

/// Appends a byte as two lower-case hex digits.
@inline(__always)
func appendHex(_ byte: UInt8, to bytes: inout [UInt8]) {
    func digit(_ value: UInt8) -> UInt8 { value < 10 ? 0x30 + value : 0x57 + value }
    bytes.append(digit(byte >> 4))
    bytes.append(digit(byte & 0x0F))
}
