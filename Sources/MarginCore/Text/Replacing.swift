import Foundation

extension String {
    /// The string with every occurrence of `target` replaced, compared byte for byte (UTF-8).
    /// Foundation's `replacingOccurrences(of:with:)` goes through NSString on Linux: tens of
    /// thousands of instructions for a short snippet, on every search hit.
    public func replacingAll(_ target: String, with replacement: String) -> String {
        // Mostly there is nothing to replace: said by one scan, without copying (or allocating).
        guard let first = target.utf8.first, utf8.contains(first) else { return self }
        var text = self
        var target = target
        var replacement = replacement
        return text.withUTF8 { bytes in
            target.withUTF8 { needle in
                replacement.withUTF8 { with in
                    guard let base = bytes.baseAddress, bytes.count >= needle.count else { return self }
                    var result = [UInt8]()
                    var copied = 0
                    var index = 0
                    // Each candidate found by memchr; what lies between matches is copied whole.
                    while index + needle.count <= bytes.count,
                        let found = memchr(base + index, Int32(first), bytes.count - needle.count + 1 - index)
                    {
                        let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                        if memcmp(base + at, needle.baseAddress!, needle.count) == 0 {
                            if result.isEmpty { result.reserveCapacity(bytes.count + with.count) }
                            result.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<at]))
                            result.append(contentsOf: with)
                            index = at + needle.count
                            copied = index
                        } else {
                            index = at + 1
                        }
                    }
                    guard copied > 0 else { return self }
                    result.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied...]))
                    return String(decoding: result, as: UTF8.self)
                }
            }
        }
    }
}

extension String {
    /// The string without spaces and tabs at either end (what `trimmingCharacters(in:
    /// .whitespaces)` does for a table's line, without Foundation's cost).
    public func trimmingSpaces() -> String {
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return "" }
        let last = bytes.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })!
        if first == bytes.startIndex && last == bytes.index(before: bytes.endIndex) { return self }
        return String(self[first...last])
    }
}

extension String {
    /// The text without white space at either end: what Foundation's `trimmingCharacters(in:
    /// .whitespacesAndNewlines)` removes (Unicode's White_Space: spaces, tabs, line breaks; and
    /// U+200B, the zero-width space), without its round trip through NSString (on Linux, its
    /// first use in a process costs hundreds of thousands of instructions, asking the runtime
    /// about the types it converts through).
    public func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.isWhitespace })!
        return String(scalars[first...last])
    }
}

extension Unicode.Scalar {
    /// White space as Foundation's `.whitespacesAndNewlines` has it.
    public var isWhitespace: Bool { properties.isWhitespace || value == 0x200B }
}

/// Text typed or imported, with its line ends as Unix writes them: CRLF and lone CR become LF.
public func normalizedLineEnds(_ text: String) -> String {
    guard text.utf8.contains(0x0D) else { return text }
    return text.replacingAll("\r\n", with: "\n").replacingAll("\r", with: "\n")
}

/// A one-line field (a title, an author): line breaks, tabs and other control characters
/// become single spaces, runs of them one.
public func singleLine(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return text }
    var result = ""
    var lastWasSpace = false
    for scalar in text.unicodeScalars {
        let blank = scalar.properties.generalCategory == .control || scalar == " "
        if blank {
            if !lastWasSpace { result.unicodeScalars.append(" ") }
        } else {
            result.unicodeScalars.append(scalar)
        }
        lastWasSpace = blank
    }
    return result.trimmingWhitespace()
}

/// Latin ligatures (U+FB00–U+FB06, what a PDF's fonts map "ff", "fi", "ffl"… to) as their
/// letters: a title or a name is searched for, cited and compared with them spelled out.
public func expandLigatures(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: { (0xFB00...0xFB06).contains($0.value) }) else { return text }
    let letters: [UInt32: String] = [
        0xFB00: "ff", 0xFB01: "fi", 0xFB02: "fl", 0xFB03: "ffi", 0xFB04: "ffl", 0xFB05: "st", 0xFB06: "st",
    ]
    var result = ""
    for scalar in text.unicodeScalars {
        if let spelled = letters[scalar.value] { result += spelled } else { result.unicodeScalars.append(scalar) }
    }
    return result
}
