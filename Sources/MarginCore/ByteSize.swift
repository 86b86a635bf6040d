import Foundation

/// Parses sizes such as `500MB`, `1GiB`, `1.5G`, `2048` (bytes). Decimal (KB, MB, GB) and binary
/// (KiB, MiB, GiB, K, M, G) units; case-insensitive.
public func parseByteSize(_ text: String) -> Int64? {
    let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
    let digits = trimmed.prefix { $0.isNumber || $0 == "." }
    let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces)
    guard let value = Double(digits), value >= 0 else { return nil }
    let multipliers: [String: Double] = [
        "": 1, "b": 1,
        "k": 1024, "kib": 1024, "kb": 1000,
        "m": Double(1 << 20), "mib": Double(1 << 20), "mb": 1e6,
        "g": Double(1 << 30), "gib": Double(1 << 30), "gb": 1e9,
        "t": Double(1 << 40), "tib": Double(1 << 40), "tb": 1e12,
    ]
    guard let multiplier = multipliers[unit] else { return nil }
    let bytes = value * multiplier
    guard bytes >= 1, bytes < 9e18 else { return nil }
    return Int64(bytes)
}
