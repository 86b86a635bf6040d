import Foundation

/// What programs other than margin read in a PDF: the yardsticks of the corpus tests.
public enum ReferenceReaders {
    public static let mutool = ["/usr/bin/mutool"].first { FileManager.default.isExecutableFile(atPath: $0) }
    public static let qpdf = ["/usr/bin/qpdf"].first { FileManager.default.isExecutableFile(atPath: $0) }
    public static let readelf = ["/usr/bin/readelf"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The corpus's ordinary PDFs (`real/`), or none when the corpus is absent.
    public static func corpusFiles() -> [String] {
        guard let corpus = Fixtures.corpus else { return [] }
        let folder = corpus + "/real"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".pdf") }
            .sorted().map { folder + "/" + $0 }
    }

    /// MuPDF's outline of a PDF (`mutool show FILE outline`): one line per entry, a tab per
    /// level, the title quoted as a C string, then "#page=N…" (nil for an entry going nowhere).
    public static func mutoolOutline(_ file: String) throws -> [(title: String, page: Int?, level: Int)] {
        let lines = try runProcess(mutool ?? "", ["show", file, "outline"]).stdout.split(separator: "\n")
        return lines.compactMap { line -> (title: String, page: Int?, level: Int)? in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 3, let quoted = fields.first(where: { $0.hasPrefix("\"") }) else { return nil }
            let level = fields.prefix { !$0.hasPrefix("\"") }.count
            let target = fields.last ?? ""
            let page =
                target.hasPrefix("#page=") ? Int(target.dropFirst("#page=".count).prefix { $0.isNumber }) : nil
            let title = String(quoted.dropFirst().dropLast()).replacingOccurrences(of: "\\t", with: " ")
                .replacingOccurrences(of: "\\n", with: " ").replacingOccurrences(of: "\\\"", with: "\"")
                .replacingOccurrences(of: "\\\\", with: "\\")
            return (title, page, level)
        }
    }

    /// The printed number of every page as the PDF's /PageLabels tree says (qpdf reads the tree;
    /// the labels are worked out here from its ranges), or nil for a PDF without one.
    public static func qpdfPageLabels(_ file: String, pageCount: Int) throws -> [String]? {
        let json = try runProcess(qpdf ?? "", ["--json", "--json-key=pagelabels", file]).stdout
        guard let data = json.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let ranges = object["pagelabels"] as? [[String: Any]], !ranges.isEmpty
        else { return nil }
        let starts = ranges.compactMap { range -> (Int, [String: Any])? in
            guard let index = range["index"] as? Int, let label = range["label"] as? [String: Any] else { return nil }
            return (index, label)
        }
        return (0..<pageCount).map { index in
            guard let (first, label) = starts.last(where: { $0.0 <= index }) else { return "" }
            let value = (label["/St"] as? Int ?? 1) + index - first
            let prefix = (label["/P"] as? String).map { $0.hasPrefix("u:") ? String($0.dropFirst(2)) : $0 } ?? ""
            return prefix + format(value, style: label["/S"] as? String)
        }
    }

    static func format(_ value: Int, style: String?) -> String {
        switch style {
        case "/D": return String(value)
        case "/r": return roman(value).lowercased()
        case "/R": return roman(value)
        case "/a", "/A":
            let letter = Character(UnicodeScalar(UInt8(65 + (value - 1) % 26)))
            let text = String(repeating: letter, count: (value - 1) / 26 + 1)
            return style == "/a" ? text.lowercased() : text
        default: return ""
        }
    }

    static func roman(_ value: Int) -> String {
        let table: [(Int, String)] = [
            (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"),
            (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
        ]
        var rest = value
        var text = ""
        for (amount, letters) in table {
            while rest >= amount {
                text += letters
                rest -= amount
            }
        }
        return text
    }

    /// Letters and digits only: titles compared with their spacing and punctuation aside.
    public static func words(_ text: String) -> String {
        text.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(String.init).joined()
    }
}
