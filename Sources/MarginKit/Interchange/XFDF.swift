import Foundation
import MarginCore
import Markup

/// XFDF (ISO 19444-1), the XML form of a PDF's annotations that Acrobat, Foxit and Okular read
/// and write: pages count from 0, rects and quad points are in PDF points, colours `#RRGGBB`,
/// dates PDF dates.
enum XFDF {
    static let namespace = "http://ns.adobe.com/xfdf/"
    /// margin's own attributes (the highlighted words as margin read them: XFDF keeps only
    /// where they are, and a word broken at a line end reads either way).
    static let marginNamespace = "urn:margin:xfdf"

    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case "\t": out += "&#9;"
            default:
                // XML 1.0 has no place for other control characters.
                if scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A PDF date in UTC: `D:20240305211407Z`.
    static func date(_ iso: String) -> String {
        let digits = iso.prefix(19).filter(\.isNumber)
        return "D:\(digits)Z"
    }

    static func number(_ value: Double) -> String { String(format: "%.3f", value) }
}

extension Library {
    /// The annotations of one book as XFDF: highlights as `<highlight>` with their rect, quad
    /// points (one quad per line), colour, note, author and dates; page memos as `<text>` notes;
    /// memos on the whole book as notes on the first page named `margin-book-memo-…`. Bookmarks
    /// are not annotations and have no place in XFDF. Each carries its margin UUID as its name.
    public func xfdf(_ book: Book) async throws -> String {
        let entry = try await backup([book]).books[0]
        let file = entry.sources.compactMap { URL(string: $0)?.lastPathComponent }.first {
            $0.lowercased().hasSuffix(".pdf")
        }
        var lines = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<xfdf xmlns=\"\(XFDF.namespace)\" xmlns:margin=\"\(XFDF.marginNamespace)\" xml:space=\"preserve\">",
            "  <annots>",
        ]
        func attributes(_ pairs: [(String, String?)]) -> String {
            pairs.compactMap { key, value in value.map { " \(key)=\"\(XFDF.escape($0))\"" } }.joined()
        }
        for highlight in entry.highlights {
            let rects = highlight.rects
            guard !rects.isEmpty else { continue }
            let union = rects.reduce([Double.infinity, .infinity, -.infinity, -.infinity]) {
                [min($0[0], $1[0]), min($0[1], $1[1]), max($0[2], $1[2]), max($0[3], $1[3])]
            }
            // Quad points: top left, top right, bottom left, bottom right, a quad each line.
            let coords = rects.flatMap { [$0[0], $0[3], $0[2], $0[3], $0[0], $0[1], $0[2], $0[1]] }
            lines.append(
                "    <highlight"
                    + attributes([
                        ("page", String(highlight.page - 1)), ("rect", union.map(XFDF.number).joined(separator: ",")),
                        ("coords", coords.map(XFDF.number).joined(separator: ",")),
                        ("color", highlight.color.uppercased()), ("name", highlight.uuid), ("title", highlight.author),
                        ("creationdate", XFDF.date(highlight.createdAt)), ("date", XFDF.date(highlight.updatedAt)),
                        ("subject", "Highlight"), ("margin:text", highlight.text),
                    ]) + ">")
            if let note = highlight.note { lines.append("      <contents>\(XFDF.escape(note))</contents>") }
            lines.append("    </highlight>")
        }
        for memo in entry.memos {
            let name = memo.page == nil ? bookMemoNoteName + "-" + memo.uuid : memo.uuid
            lines.append(
                "    <text"
                    + attributes([
                        ("page", String((memo.page ?? 1) - 1)), ("rect", "20.000,20.000,40.000,40.000"),
                        ("name", name), ("title", memo.author), ("creationdate", XFDF.date(memo.createdAt)),
                        ("date", XFDF.date(memo.updatedAt)), ("icon", "Comment"),
                    ]) + ">")
            lines.append("      <contents>\(XFDF.escape(memo.text))</contents>")
            lines.append("    </text>")
        }
        lines.append("  </annots>")
        if let file { lines.append("  <f href=\"\(XFDF.escape(file))\"/>") }
        lines.append("</xfdf>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Takes in XFDF for `book`: highlight, underline, strikeout and squiggly become highlights
    /// (the text under their quad points), text and freetext notes memos on their page. A name
    /// that is a UUID is kept (an export of margin's comes back as itself); the XML is read
    /// strictly, without DTDs or entities.
    public func importXFDF(_ data: Data, name: String, into book: Book, dryRun: Bool = false) async throws
        -> ImportReport
    {
        let nodes: [Markup.Node]
        do { nodes = try Markup.xml(data) } catch let error as MarkupError {
            throw MarginError.invalidBackup("\(name): \(error.description)")
        }
        guard
            case .start(let root, _, _)? = nodes.first(where: {
                if case .start = $0 { return true } else { return false }
            }),
            root == "xfdf"
        else { throw MarginError.invalidBackup("\(name) is not XFDF: its root element is not <xfdf>") }
        var report = ImportReport()
        report.dryRun = dryRun
        var found = [ForeignAnnotation]()
        let marks: Set<String> = ["highlight", "underline", "strikeout", "squiggly"]
        let notes: Set<String> = ["text", "freetext"]
        var current: (kind: String, attributes: [String: String])?
        var contents: String?
        var inContents = false
        var index = 0
        // Annotations are the children of <annots>: depth 2 below <xfdf>; what is deeper
        // belongs to them (a popup, rich text, an ink list).
        var depth = 0
        var inAnnots = false
        for node in nodes {
            switch node {
            case .start(let element, let attributes, let empty):
                if depth == 1 && element == "annots" { inAnnots = true }
                if depth == 2 && inAnnots {
                    if marks.contains(element) || notes.contains(element) {
                        current = (element, attributes)
                        contents = nil
                        if empty {
                            found += xfdfAnnotation(element, attributes, contents: nil, index: &index, report: &report)
                            current = nil
                        }
                    } else {
                        index += 1
                        report.skip(
                            "<\(element)> \(attributes["name"].map { "'\($0)'" } ?? "\(index)") of \(name)",
                            "\(element) annotations have no place in margin")
                    }
                } else if depth == 3 && element == "contents" && current != nil {
                    inContents = !empty
                    contents = contents ?? ""
                }
                if !empty { depth += 1 }
            case .text(let text):
                if inContents { contents = (contents ?? "") + text }
            case .end(let element):
                depth -= 1
                if depth == 3 && element == "contents" {
                    inContents = false
                } else if depth == 2, let open = current, open.kind == element {
                    found += xfdfAnnotation(
                        element, open.attributes, contents: contents, index: &index, report: &report)
                    current = nil
                } else if depth == 1 && element == "annots" {
                    inAnnots = false
                }
            }
        }
        let own = try await place(found, in: book, report: &report)
        try await merge([(book, own.bookmarks, own.highlights, own.memos)], dryRun: dryRun, report: &report)
        return report
    }

    private func xfdfAnnotation(
        _ element: String, _ attributes: [String: String], contents: String?, index: inout Int,
        report: inout ImportReport
    ) -> [ForeignAnnotation] {
        index += 1
        let what = "<\(element)> \(attributes["name"].map { "'\($0)'" } ?? "\(index)")"
        guard let pageText = attributes["page"], let page = Int(pageText), page >= 0 else {
            report.skip(what, "it has no page")
            return []
        }
        func numbers(_ text: String?) -> [Double] {
            (text ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).compactMap { Double($0) }
        }
        let created = attributes["creationdate"].flatMap(parsePDFDate) ?? Date(timeIntervalSince1970: 0)
        let modified = attributes["date"].flatMap(parsePDFDate) ?? created
        let name = attributes["name"] ?? ""
        var item = ForeignAnnotation(
            kind: element == "text" || element == "freetext" ? .memo : .highlight,
            origin: "xfdf \(element) \(name) \(page) \(attributes["rect"] ?? "")", what: what, page: page + 1,
            note: contents, color: attributes["color"], author: attributes["title"], created: created,
            modified: modified)
        if name.hasPrefix(bookMemoNoteName + "-") {
            item.page = nil
            item.uuid = UUID(uuidString: String(name.dropFirst(bookMemoNoteName.count + 1)))
        } else {
            item.uuid = UUID(uuidString: name)
        }
        if item.kind == .highlight {
            item.text = attributes["text"]
            let coords = numbers(attributes["coords"])
            if coords.count >= 8 {
                item.rects = stride(from: 0, to: coords.count - 7, by: 8).map { at in
                    let xs = stride(from: at, to: at + 8, by: 2).map { coords[$0] }
                    let ys = stride(from: at + 1, to: at + 8, by: 2).map { coords[$0] }
                    return [xs.min()!, ys.min()!, xs.max()!, ys.max()!]
                }
            } else {
                let rect = numbers(attributes["rect"])
                if rect.count == 4 { item.rects = [rect] }
            }
        }
        return [item]
    }
}
