import Foundation
import MarginCore

/// Highlight colours: a few names, or any `#RRGGBB`.
public enum HighlightColor {
    public static let named: [String: String] = [
        "yellow": "#ffd400", "green": "#5fb236", "blue": "#2ea8e5", "pink": "#ff8fc8", "purple": "#a28ae5",
        "red": "#ff6666", "orange": "#f19837", "gray": "#aaaaaa",
    ]
    public static let defaultColor = "#ffd400"
    /// The colours a reader offers, in the order offered (the first is the default).
    public static let palette: [(name: String, hex: String)] = [
        "yellow", "green", "blue", "pink", "purple", "red", "orange", "gray",
    ].map { ($0, named[$0] ?? defaultColor) }

    /// Normalises a name or `#RRGGBB` to lowercase `#rrggbb`.
    public static func parse(_ text: String) throws -> String {
        let value = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let hex = named[value] { return hex }
        let digits = value.hasPrefix("#") ? String(value.dropFirst()) : value
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit) else {
            throw MarginError.invalidArgument(
                "'\(text)' is not a colour: use \(named.keys.sorted().joined(separator: ", ")) or #RRGGBB")
        }
        return "#" + digits
    }

    /// The RGB components of `#rrggbb` (yellow when malformed).
    public static func rgb(_ hex: String) -> RGB {
        let digits = hex.hasPrefix("#") ? String(hex.dropFirst()) : hex
        guard digits.count == 6, let value = UInt32(digits, radix: 16) else { return RGB(red: 1, green: 0.83, blue: 0) }
        return RGB(
            red: Double((value >> 16) & 0xff) / 255, green: Double((value >> 8) & 0xff) / 255,
            blue: Double(value & 0xff) / 255)
    }

    /// `#rrggbb` for an RGB colour.
    public static func hex(_ color: RGB) -> String {
        func byte(_ v: Double) -> Int { Int((max(0, min(1, v)) * 255).rounded()) }
        return String(format: "#%02x%02x%02x", byte(color.red), byte(color.green), byte(color.blue))
    }
}
