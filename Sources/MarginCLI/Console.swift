import Foundation
import MarginCore
import MarginKit

/// Writing to the terminal: results on stdout, messages on stderr.
enum Console {
    /// Asked once a command (a table's cells ask for each of them): at start, and again by the
    /// team helper for each command it runs on another process's descriptors (`TeamHelper`).
    nonisolated(unsafe) static var stdoutIsTTY = isatty(STDOUT_FILENO) == 1
    nonisolated(unsafe) static var stderrIsTTY = isatty(STDERR_FILENO) == 1

    /// Asks again where stdout and stderr go (the team helper, once it has taken a command's).
    static func askTerminalAgain() {
        stdoutIsTTY = isatty(STDOUT_FILENO) == 1
        stderrIsTTY = isatty(STDERR_FILENO) == 1
    }

    /// A message on stderr, control characters removed.
    static func error(_ message: String) {
        write(terminalSafe(message) + "\n", to: STDERR_FILENO)
    }

    /// A line on stdout, control characters removed (a PDF's title can hold escape sequences).
    static func out(_ text: String) {
        outRaw(terminalSafe(text))
    }

    /// A line on stdout as given: for text already made safe, with Margin's own colours.
    static func outRaw(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// Prints one JSON document on stdout.
    static func json<T: Encodable>(_ value: T) throws {
        out(String(decoding: try ViewJSON.data(value), as: UTF8.self))
    }

    /// Prints a list of books as one JSON document: the bytes `json(_:)` would print, written
    /// without the encoder (see `PrettyJSON`).
    static func json(_ books: [BookInfo]) {
        write(BookInfo.json(books))
    }

    /// Prints search hits as one JSON document, as `json(_:)` would (see `PrettyJSON`).
    static func json(_ hits: [SearchHit]) {
        write(PrettyJSON.array(hits, bytesEach: 320) { $1.write(to: &$0) })
    }

    /// A JSON document on stdout, as `out` writes text.
    private static func write(_ json: PrettyJSON) {
        var safe = [UInt8]()
        safe.reserveCapacity(json.bytes.count + 1)
        appendTerminalSafe(json.bytes[...], to: &safe)
        safe.append(0x0A)
        safe.withUnsafeBytes { _ = writeAll($0, to: STDOUT_FILENO) }
    }

    /// Columns aligned with two spaces; the last column is not padded.
    static func table(_ header: [String], _ rows: [[String]]) {
        var all = [header] + rows
        // Columns on screen (an ASCII string's bytes are its columns, counted without a walk;
        // other text by glibc's wcwidth: Hangul and CJK take two).
        var counts = all.map { row in row.map(displayWidth) }
        var widths = header.indices.map { column in counts.map { $0[column] }.max() ?? 0 }
        // On a terminal the table fits its width: the widest columns give way, cut with "…".
        if stdoutIsTTY, let columns = terminalColumns(), !widths.isEmpty {
            var total = widths.reduce(0, +) + 2 * (widths.count - 1)
            // Long text (titles, authors, paths) gives way first, down to 10 columns; short
            // columns (ids, counts, dates) only if that is not enough.
            let long = Set(widths.indices.filter { widths[$0] > 16 })
            for (candidates, floor) in [(long, 10), (Set(widths.indices), 6)] {
                while total > columns,
                    let widest = candidates.filter({ widths[$0] > floor }).max(by: { widths[$0] < widths[$1] })
                {
                    widths[widest] -= 1
                    total -= 1
                }
            }
            for (r, row) in all.enumerated() {
                for (c, cell) in row.enumerated() where counts[r][c] > widths[c] {
                    all[r][c] = truncated(cell, to: widths[c])
                    counts[r][c] = displayWidth(all[r][c])
                }
            }
        }
        // Assembled as bytes and written at once: String padding and appending (Foundation's
        // padding(toLength:) most of all) cost thousands of instructions a cell on Linux.
        var table = [UInt8]()
        var line = [UInt8]()
        for (row, count) in zip(all, counts) {
            line.removeAll(keepingCapacity: true)
            for (index, cell) in row.enumerated() {
                if index > 0 { line.append(contentsOf: [0x20, 0x20]) }
                line.append(contentsOf: cell.utf8)
                if index < row.count - 1 {
                    line.append(contentsOf: repeatElement(0x20, count: max(0, widths[index] - count[index])))
                }
            }
            // Spaces and tabs trimmed from both ends, controls removed.
            let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
            let start = line.firstIndex { !isSpace($0) } ?? line.endIndex
            let end = (line.lastIndex { !isSpace($0) } ?? start - 1) + 1
            if !table.isEmpty { table.append(0x0A) }
            if start < end { appendTerminalSafe(line[start..<end], to: &table) }
        }
        table.append(0x0A)
        table.withUnsafeBytes { _ = writeAll($0, to: STDOUT_FILENO) }
    }

    /// The terminal's width in columns, when stdout is one that says.
    static func terminalColumns() -> Int? {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// `text` cut to `width` columns, the last one "…".
    static func truncated(_ text: String, to width: Int) -> String {
        var result = String.UnicodeScalarView()
        var used = 0
        for scalar in text.unicodeScalars {
            let w = scalarWidth(scalar)
            if used + w > width - 1 { break }
            result.append(scalar)
            used += w
        }
        return String(result) + "…"
    }

    /// Writes text to a file descriptor, whole, straight from its bytes: `FileHandle.write(Data(…))`
    /// makes `Data` from a sequence, whose first use in a process asks the runtime whether the
    /// sequence's type is contiguous, a scan of all 7,300 conformances in the executable.
    static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { _ = writeAll(UnsafeRawBufferPointer($0), to: descriptor) }
    }

    /// A cell: one line, at most `width` characters on a terminal.
    static func cell(_ text: String?, width: Int = 48) -> String {
        let raw = text ?? "-"
        // One look for both before either replacement (a title seldom holds them).
        let flat =
            raw.utf8.contains { $0 == 0x0A || $0 == 0x09 }
            ? raw.replacingAll("\n", with: " ").replacingAll("\t", with: " ") : raw
        guard stdoutIsTTY, flat.count > width else { return flat }
        return String(flat.prefix(width - 1)) + "…"
    }
}

/// `text` followed by spaces up to `width` characters.
func padded(_ text: String, _ width: Int) -> String {
    let count = text.count
    return count >= width ? text : text + String(repeating: " ", count: width - count)
}

/// "2026-11-21 19:53" in local time.
func shortDate(_ date: Date?) -> String {
    guard let date else { return "-" }
    // localtime_r, not a DateFormatter: that loads ICU's calendars, milliseconds a process.
    var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    guard localtime_r(&seconds, &parts) != nil else { return "-" }
    // Written as bytes: interpolating five numbers costs more than the rest of a table's row.
    var text = Array(String(parts.tm_year + 1900).utf8)
    text.reserveCapacity(16)
    func two(_ separator: UInt8, _ value: Int32) {
        text.append(separator)
        if (0..<100).contains(value) {
            text.append(UInt8(0x30 + value / 10))
            text.append(UInt8(0x30 + value % 10))
        } else {
            text += String(value).utf8
        }
    }
    two(0x2D, parts.tm_mon + 1)
    two(0x2D, parts.tm_mday)
    two(0x20, parts.tm_hour)
    two(0x3A, parts.tm_min)
    return String(decoding: text, as: UTF8.self)
}

/// The text without control characters that a terminal would act on (escape sequences,
/// carriage returns, bells): C0 and C1 controls and DEL, except line feeds, tabs and `keep`.
func terminalSafe(_ text: String, keep: [Unicode.Scalar] = []) -> String {
    // Most text has none (JSON's line feeds aside): a byte scan says so without decoding.
    guard hasControls(text) else { return text }
    var result = [UInt8]()
    result.reserveCapacity(text.utf8.count)
    appendTerminalSafe(Array(text.utf8)[...], to: &result, keep: keep)
    return String(decoding: result, as: UTF8.self)
}

/// Appends UTF-8 `bytes` without their control characters (line feeds, tabs and `keep` stay):
/// the runs between controls are copied whole (a JSON document has a line feed every few bytes).
func appendTerminalSafe(_ bytes: ArraySlice<UInt8>, to result: inout [UInt8], keep: [Unicode.Scalar] = []) {
    bytes.withUnsafeBufferPointer { buffer in
        let count = buffer.count
        var start = 0  // the first byte not appended yet
        var index = 0
        // Where a byte-by-byte look is needed: up to here, eight bytes at a time were plain.
        var plainUpTo = 0
        while index < count {
            // Eight bytes at once: none below 0x20, none 0x7F or 0xC2 (a control's first byte)
            // and the whole word is copied with its run.
            if index >= plainUpTo, index + 8 <= count {
                let word = UnsafeRawPointer(buffer.baseAddress! + index).loadUnaligned(as: UInt64.self)
                if !mayHoldControls(word) {
                    index += 8
                    continue
                }
                plainUpTo = index + 8
            }
            let byte = buffer[index]
            if (byte >= 0x20 && byte != 0x7F && byte != 0xC2) || byte == 0x0A || byte == 0x09 {
                index += 1
                continue
            }
            // C0 controls and DEL are single bytes, C1 controls 0xC2 0x80…0x9F.
            var width = 1
            var scalar = byte
            if byte == 0xC2 {
                guard index + 1 < count, buffer[index + 1] >= 0x80, buffer[index + 1] <= 0x9F else {
                    index += 1
                    continue
                }
                width = 2
                scalar = buffer[index + 1]
            }
            if !keep.contains(Unicode.Scalar(scalar)) {
                result.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<index]))
                start = index + width
            }
            index += width
        }
        result.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<count]))
    }
}

/// Whether any of the eight bytes is below 0x20, 0x7F or 0xC2 (bit tricks that find a byte
/// less than, or equal to, a value in every byte of a word at once; never a false "no").
@inline(__always)
private func mayHoldControls(_ word: UInt64) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    func holdsZero(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
    let below20 = (word &- ones &* 0x20) & ~word & highs != 0
    return below20 || holdsZero(word ^ (ones &* 0x7F)) || holdsZero(word ^ (ones &* 0xC2))
}

/// Whether the text holds a control other than a line feed or a tab: a C0 byte, DEL, or a C1
/// control (U+0080…U+009F, encoded as 0xC2 0x80…0x9F).
private func hasControls(_ text: String) -> Bool {
    var previous: UInt8 = 0
    for byte in text.utf8 {
        if (byte < 0x20 && byte != 0x0A && byte != 0x09) || byte == 0x7F
            || (previous == 0xC2 && byte >= 0x80 && byte <= 0x9F)
        {
            return true
        }
        previous = byte
    }
    return false
}
