extension String {
    /// The string with every occurrence of `target` replaced, compared byte for byte (UTF-8).
    /// Foundation's `replacingOccurrences(of:with:)` goes through NSString on Linux: tens of
    /// thousands of instructions for a short snippet, on every search hit.
    public func replacingAll(_ target: String, with replacement: String) -> String {
        // Mostly there is nothing to replace: said by one scan, without copying (or allocating).
        guard let first = target.utf8.first, utf8.contains(first) else { return self }
        let needle = Array(target.utf8)
        let bytes = Array(utf8)
        guard bytes.count >= needle.count else { return self }
        var result = [UInt8]()
        result.reserveCapacity(bytes.count)
        var index = 0
        var changed = false
        let last = bytes.count - needle.count
        while index < bytes.count {
            if index <= last, bytes[index] == needle[0], bytes[index..<index + needle.count].elementsEqual(needle) {
                result.append(contentsOf: replacement.utf8)
                index += needle.count
                changed = true
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return changed ? String(decoding: result, as: UTF8.self) : self
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
