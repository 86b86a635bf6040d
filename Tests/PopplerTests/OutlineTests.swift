import Foundation
import Poppler
import TestSupport
import Testing

/// Outlines and page labels as poppler reads them, checked on a fixture made to have both and
/// against independent readers (MuPDF's `mutool show … outline`, qpdf's page-label tree) on the
/// real-world corpus.
@Suite struct OutlineTests {
    @Test func theFixturesOutlineAndLabels() throws {
        let document = try Document(path: Fixtures.pdf("outlined.pdf"))
        #expect(
            document.outline() == [
                OutlineEntry(title: "Preface", page: 1, level: 1),
                OutlineEntry(title: "1 Introduction", page: 3, level: 1),
                OutlineEntry(title: "1.1 Motivation", page: 3, level: 2),
                OutlineEntry(title: "1.2 Scope", page: 4, level: 2),
                OutlineEntry(title: "2 Method", page: 5, level: 1),
                OutlineEntry(title: "Appendix", page: 6, level: 1),
            ])
        let labels = try (1...document.pageCount).map { try document.page($0).label }
        #expect(labels == ["i", "ii", "1", "2", "3", "A-1"])
    }

    @Test func aPDFWithoutThemHasNone() throws {
        let document = try Document(path: Fixtures.pdf("sample.pdf"))
        #expect(document.outline().isEmpty)
        // Without /PageLabels poppler answers the page number itself.
        #expect(try (1...3).map { try document.page($0).label } == ["1", "2", "3"])
    }

    static let mutool = ["/usr/bin/mutool"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let qpdf = ["/usr/bin/qpdf"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static func corpusFiles() -> [String] {
        guard let corpus = Fixtures.corpus else { return [] }
        let folder = corpus + "/real"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".pdf") }
            .sorted().map { folder + "/" + $0 }
    }

    static func output(_ tool: String, _ arguments: [String]) throws -> String {
        try runProcess(tool, arguments).stdout
    }

    /// Every corpus PDF's outline: as many entries as mutool lists, at the same levels, going to
    /// the same pages, with the same titles (spacing aside).
    @Test(.enabled(if: Fixtures.corpus != nil && mutool != nil, "needs ../shared/corpus and mutool (mupdf-tools)"))
    func outlinesMatchMuPDFOnTheCorpus() throws {
        var compared = 0
        var pages = 0
        for file in Self.corpusFiles() {
            guard let document = try? Document(path: file) else { continue }
            // mutool: one line per entry, a tab per level, the title quoted, then "#page=N…".
            let lines = try Self.output(Self.mutool ?? "", ["show", file, "outline"]).split(separator: "\n")
            let expected = lines.compactMap { line -> (title: String, page: Int?, level: Int)? in
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                guard fields.count >= 3, let quoted = fields.first(where: { $0.hasPrefix("\"") }) else { return nil }
                let level = fields.prefix { !$0.hasPrefix("\"") }.count
                let target = fields.last ?? ""
                let page =
                    target.hasPrefix("#page=")
                    ? Int(target.dropFirst("#page=".count).prefix { $0.isNumber }) : nil
                // mutool escapes the title as a C string.
                let title = String(quoted.dropFirst().dropLast()).replacingOccurrences(of: "\\t", with: " ")
                    .replacingOccurrences(of: "\\n", with: " ").replacingOccurrences(of: "\\\"", with: "\"")
                    .replacingOccurrences(of: "\\\\", with: "\\")
                return (title, page, level)
            }
            let outline = document.outline()
            #expect(outline.count == expected.count, "\(file)")
            guard outline.count == expected.count else { continue }
            func words(_ text: String) -> String {
                text.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(String.init).joined()
            }
            for (entry, reference) in zip(outline, expected) {
                #expect(entry.level == reference.level, "\(file): \(entry) vs \(reference)")
                // A destination whose page object is missing from the file (pages cut out of a
                // larger PDF): poppler says nowhere, mutool page 1. Compared where both know.
                if let page = reference.page, let found = entry.page {
                    #expect(found == page, "\(file): \(entry) vs \(reference)")
                    pages += 1
                }
                #expect(words(entry.title) == words(reference.title), "\(file): \(entry) vs \(reference)")
            }
            if !outline.isEmpty { compared += 1 }
        }
        #expect(compared >= 5, "the corpus has PDFs with outlines")
        #expect(pages >= 150, "entries with pages to compare: \(pages)")
    }

    /// Every corpus PDF with a page-label tree: poppler's label of every page is what the tree
    /// says (qpdf reads the tree; the labels are worked out here from its ranges).
    @Test(.enabled(if: Fixtures.corpus != nil && qpdf != nil, "needs ../shared/corpus and qpdf"))
    func pageLabelsMatchTheLabelTreeOnTheCorpus() throws {
        var compared = 0
        for file in Self.corpusFiles() {
            let json = try Self.output(Self.qpdf ?? "", ["--json", "--json-key=pagelabels", file])
            guard let data = json.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let ranges = object["pagelabels"] as? [[String: Any]], !ranges.isEmpty,
                let document = try? Document(path: file)
            else { continue }
            let starts = ranges.compactMap { range -> (Int, [String: Any])? in
                guard let index = range["index"] as? Int, let label = range["label"] as? [String: Any] else {
                    return nil
                }
                return (index, label)
            }
            for number in 1...document.pageCount {
                let index = number - 1
                guard let (first, label) = starts.last(where: { $0.0 <= index }) else { continue }
                let value = (label["/St"] as? Int ?? 1) + index - first
                let style = label["/S"] as? String
                let prefix = (label["/P"] as? String).map { $0.hasPrefix("u:") ? String($0.dropFirst(2)) : $0 } ?? ""
                let expected = prefix + Self.format(value, style: style)
                let actual = try document.page(number).label ?? ""
                #expect(actual == expected, "\(file) page \(number)")
                if actual != expected { break }
            }
            compared += 1
        }
        #expect(compared >= 3, "the corpus has PDFs with page labels")
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
}
