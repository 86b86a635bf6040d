import Foundation
import MarginCore
import MarginKit

/// Writing to the terminal: results on stdout, messages on stderr.
enum Console {
    static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }
    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }

    /// A message on stderr, control characters removed.
    static func error(_ message: String) {
        FileHandle.standardError.write(Data((terminalSafe(message) + "\n").utf8))
    }

    /// A line on stdout, control characters removed (a PDF's title can hold escape sequences).
    static func out(_ text: String) {
        outRaw(terminalSafe(text))
    }

    /// A line on stdout as given: for text already made safe, with Margin's own colours.
    static func outRaw(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Prints one JSON document on stdout.
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        out(String(decoding: data, as: UTF8.self))
    }

    /// Columns aligned with two spaces; the last column is not padded.
    static func table(_ header: [String], _ rows: [[String]]) {
        let all = [header] + rows
        let counts = all.map { row in row.map(\.count) }
        let widths = header.indices.map { column in counts.map { $0[column] }.max() ?? 0 }
        // Padded and trimmed by hand: Foundation's padding(toLength:) and trimmingCharacters(in:)
        // cost tens of thousands of instructions a cell on Linux.
        // One write for the whole table, not one a line.
        var table = ""
        for (row, count) in zip(all, counts) {
            var line = ""
            for (index, cell) in row.enumerated() {
                if index > 0 { line += "  " }
                line += cell
                if index < row.count - 1 { line += String(repeating: " ", count: max(0, widths[index] - count[index])) }
            }
            if !table.isEmpty { table += "\n" }
            table += terminalSafe(line.trimmingSpaces())
        }
        outRaw(table)
    }

    /// A cell: one line, at most `width` characters on a terminal.
    static func cell(_ text: String?, width: Int = 48) -> String {
        let flat = (text ?? "-").replacingAll("\n", with: " ").replacingAll("\t", with: " ")
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
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return
        "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min))"
}

/// The text without control characters that a terminal would act on (escape sequences,
/// carriage returns, bells): C0 and C1 controls and DEL, except line feeds, tabs and `keep`.
func terminalSafe(_ text: String, keep: Set<Unicode.Scalar> = []) -> String {
    // Most text has none (JSON's line feeds aside): a byte scan says so without decoding.
    guard hasControls(text) else { return text }
    // Byte by byte: C0 controls and DEL are single bytes, C1 controls 0xC2 0x80…0x9F.
    let bytes = Array(text.utf8)
    var result = [UInt8]()
    result.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
        let byte = bytes[index]
        if byte < 0x20 || byte == 0x7F {
            if byte == 0x0A || byte == 0x09 || keep.contains(Unicode.Scalar(byte)) { result.append(byte) }
            index += 1
        } else if byte == 0xC2, index + 1 < bytes.count, bytes[index + 1] >= 0x80, bytes[index + 1] <= 0x9F {
            if keep.contains(Unicode.Scalar(bytes[index + 1])) { result += [byte, bytes[index + 1]] }
            index += 2
        } else {
            result.append(byte)
            index += 1
        }
    }
    return String(decoding: result, as: UTF8.self)
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
