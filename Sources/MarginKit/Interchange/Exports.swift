import Foundation
import MarginCore

/// A file an export writes: its path relative to the folder it goes in, and its bytes.
public struct ExportedFile: Sendable {
    public var path: String
    public var contents: String
}

extension Library {
    /// The files of an export that writes one (or one folder) per book: `xfdf` (BOOK.xfdf),
    /// `koreader` (BOOK.sdr/metadata.pdf.lua) and `obsidian` (BOOK.md). `name` names a book's
    /// file (without extension).
    public func exportFiles(_ books: [Book], format: ExportFormat, name: (Book) -> String) async throws
        -> [ExportedFile]
    {
        var files = [ExportedFile]()
        for book in books {
            switch format {
            case .xfdf: files.append(ExportedFile(path: name(book) + ".xfdf", contents: try await xfdf(book)))
            case .koreader:
                files.append(
                    ExportedFile(path: name(book) + ".sdr/metadata.pdf.lua", contents: try await koreaderSidecar(book)))
            case .obsidian: files.append(ExportedFile(path: name(book) + ".md", contents: try await obsidianNote(book)))
            default: throw MarginError.invalidArgument("\(format.rawValue) is one document, not a file per book")
            }
        }
        return files
    }

    /// The book's name as KOReader would know its document: the file it was added from, else
    /// its title.
    public func documentName(_ book: Book) async throws -> String? {
        let id = book.id ?? 0
        let sources = try await repository.read { store in
            try store.fetch(Query<Source>().filter(Source.Fields.bookId == id))
        }
        return sources.compactMap { URL(string: $0.url)?.lastPathComponent.removingPercentEncoding }
            .first { $0.lowercased().hasSuffix(".pdf") }.map { String($0.dropLast(4)) }
    }

    /// A KOReader sidecar for the book: its highlights in KOReader's current `annotations` list
    /// (text, note, colour, date, page, start and end positions, page boxes from the page's top
    /// left), page bookmarks with their label as note, memos on a page as page bookmarks with
    /// a note, and KOReader's partial MD5 of the file so that KOReader (and margin) know the
    /// document; each carries its margin UUID and author (`margin_uuid`, `margin_author`: KOReader
    /// keeps fields it doesn't know). Memos on the whole book have no place in KOReader.
    func koreaderSidecar(_ book: Book) async throws -> String {
        let entry = try await backup([book]).books[0]
        let path = try await ensureCached(book)
        let document = try PDFEngines.current.open(path: path, password: try password(of: book))
        let stamp = secondsStamp(TimeZone.current)
        func local(_ iso: String) -> LuaValue { .string(parseISODate(iso).map(stamp.string(from:)) ?? iso) }
        let names = Dictionary(koreaderColors.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var items = [(page: Int, top: Double, value: LuaValue)]()
        for highlight in entry.highlights where !highlight.rects.isEmpty {
            let height = try document.page(highlight.page).size.height
            let boxes = highlight.rects.map { rect -> LuaValue in
                .table([
                    (.string("h"), .number(rect[3] - rect[1])), (.string("w"), .number(rect[2] - rect[0])),
                    (.string("x"), .number(rect[0])), (.string("y"), .number(height - rect[3])),
                ])
            }
            let first = highlight.rects[0]
            let last = highlight.rects[highlight.rects.count - 1]
            func position(_ x: Double, _ rect: [Double]) -> LuaValue {
                .table([
                    (.string("page"), .number(Double(highlight.page))), (.string("rotation"), .number(0)),
                    (.string("x"), .number(x)), (.string("y"), .number(height - (rect[1] + rect[3]) / 2)),
                    (.string("zoom"), .number(1)),
                ])
            }
            var fields: [(key: LuaValue, value: LuaValue)] = [
                (.string("color"), .string(names[highlight.color] ?? highlight.color)),
                (.string("datetime"), local(highlight.createdAt)),
                (.string("datetime_updated"), local(highlight.updatedAt)), (.string("drawer"), .string("lighten")),
                (.string("page"), .number(Double(highlight.page))),
                (.string("pageno"), .number(Double(highlight.page))), (.string("pboxes"), .table(luaArray(boxes))),
                (.string("pos0"), position(first[0] + 0.5, first)), (.string("pos1"), position(last[2] - 0.5, last)),
                (.string("text"), .string(highlight.text)),
            ]
            if let chapter = highlight.chapter { fields.append((.string("chapter"), .string(chapter))) }
            if let note = highlight.note { fields.append((.string("note"), .string(note))) }
            fields.append((.string("margin_uuid"), .string(highlight.uuid)))
            if let author = highlight.author { fields.append((.string("margin_author"), .string(author))) }
            items.append((highlight.page, -first[3], .table(fields)))
        }
        for bookmark in entry.bookmarks {
            var fields: [(key: LuaValue, value: LuaValue)] = [
                (.string("datetime"), local(bookmark.createdAt)), (.string("page"), .number(Double(bookmark.page))),
                (.string("pageno"), .number(Double(bookmark.page))),
            ]
            if let label = bookmark.label { fields.append((.string("note"), .string(label))) }
            if let chapter = bookmark.chapter { fields.append((.string("chapter"), .string(chapter))) }
            fields.append((.string("margin_uuid"), .string(bookmark.uuid)))
            if let author = bookmark.author { fields.append((.string("margin_author"), .string(author))) }
            items.append((bookmark.page, -.infinity, .table(fields)))
        }
        // A memo on a page is, to KOReader, a page bookmark with a note (marked as a memo for
        // margin; KOReader keeps it as a bookmark). One on the whole book has no place.
        for memo in entry.memos {
            guard let page = memo.page else { continue }
            var fields: [(key: LuaValue, value: LuaValue)] = [
                (.string("datetime"), local(memo.createdAt)), (.string("datetime_updated"), local(memo.updatedAt)),
                (.string("margin_memo"), .boolean(true)), (.string("margin_uuid"), .string(memo.uuid)),
                (.string("note"), .string(memo.text)), (.string("page"), .number(Double(page))),
                (.string("pageno"), .number(Double(page))),
            ]
            if let author = memo.author { fields.append((.string("margin_author"), .string(author))) }
            items.append((page, .infinity, .table(fields)))
        }
        items.sort { ($0.page, $0.top) < ($1.page, $1.top) }
        var props: [(key: LuaValue, value: LuaValue)] = [(.string("title"), .string(book.title))]
        if let author = book.author { props.append((.string("authors"), .string(author))) }
        var sidecar: [(key: LuaValue, value: LuaValue)] = [
            (.string("annotations"), .table(luaArray(items.map(\.value)))),
            (.string("doc_pages"), .number(Double(book.pages))), (.string("doc_props"), .table(props)),
        ]
        if let md5 = koreaderPartialMD5(path) { sidecar.append((.string("partial_md5_checksum"), .string(md5))) }
        return "-- we can read Lua syntax here!\nreturn " + LuaValue.table(sidecar).literal() + "\n"
    }

    /// A Markdown note for Obsidian: YAML front matter (title, authors, year, DOI, citation key,
    /// tags), then each highlight as a quote callout with its colour, a link to its page and its
    /// note, each page memo and bookmark in page order, each followed by a block id (`^m-…`,
    /// from the annotation's UUID: the same in every export, so links into the note hold).
    func obsidianNote(_ book: Book) async throws -> String {
        let entry = try await backup([book]).books[0]
        let link =
            entry.sources.first { $0.lowercased().hasPrefix("http") }
            ?? (blobs.contains(book.sha256)
                ? URL(fileURLWithPath: blobs.path(for: book.sha256)).absoluteString : nil)
        func yaml(_ text: String) -> String {
            "\""
                + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\n", with: "\\n") + "\""
        }
        var lines = ["---", "title: \(yaml(book.title))"]
        let authors = (book.author ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        if !authors.isEmpty { lines.append("authors: [\(authors.map(yaml).joined(separator: ", "))]") }
        if let year = book.year { lines.append("year: \(year)") }
        if let doi = book.doi { lines.append("doi: \(yaml(doi))") }
        if let key = book.citationKey { lines.append("citekey: \(yaml(key))") }
        if !entry.tags.isEmpty { lines.append("tags: [\(entry.tags.map(yaml).joined(separator: ", "))]") }
        lines.append("margin: \(yaml("urn:uuid:" + entry.uuid))")
        lines += ["---", "", "# \(book.title)", ""]
        func page(_ number: Int, label: String?) -> String {
            let shown = "p. " + (label ?? String(number))
            return link.map { "[\(shown)](\($0)#page=\(number))" } ?? shown
        }
        func blockID(_ uuid: String) -> String { "^m-" + uuid.replacingOccurrences(of: "-", with: "").prefix(12) }
        if let memo = book.memo, !memo.isEmpty { lines += [memo, ""] }
        var blocks = [(page: Int, order: Int, lines: [String])]()
        for (index, highlight) in entry.highlights.enumerated() {
            var block = ["> [!quote|\(highlight.color)] \(page(highlight.page, label: highlight.pageLabel))"]
            block += highlight.text.split(separator: "\n", omittingEmptySubsequences: false).map { "> " + $0 }
            if let note = highlight.note {
                let noteLines = note.split(separator: "\n", omittingEmptySubsequences: false)
                block.append(">")
                block += noteLines.enumerated().map { ($0.offset == 0 ? "> **Note:** " : "> ") + $0.element }
            }
            blocks.append((highlight.page, index, block + ["", blockID(highlight.uuid)]))
        }
        for memo in entry.memos {
            let title = memo.page.map { "> [!note] " + page($0, label: memo.pageLabel) } ?? "> [!note] On the book"
            let body = memo.text.split(separator: "\n", omittingEmptySubsequences: false).map { "> " + $0 }
            blocks.append((memo.page ?? 0, 1 << 20, [title] + body + ["", blockID(memo.uuid)]))
        }
        for bookmark in entry.bookmarks {
            blocks.append(
                (
                    bookmark.page, -1,
                    [
                        "- 🔖 \(page(bookmark.page, label: bookmark.pageLabel))"
                            + (bookmark.label.map { " — \($0)" } ?? "")
                            + " \(blockID(bookmark.uuid))"
                    ]
                ))
        }
        for block in blocks.sorted(by: { ($0.page, $0.order) < ($1.page, $1.order) }) {
            lines += block.lines + [""]
        }
        return lines.joined(separator: "\n")
    }

    /// The books' highlights as Readwise's CSV import reads them: Highlight, Title, Author, URL,
    /// Note, Location (the page) and Date.
    public func readwiseCSV(_ books: [Book]) async throws -> String {
        let backup = try await backup(books)
        var rows = ["Highlight,Title,Author,URL,Note,Location,Date"]
        let stamp = secondsStamp(TimeZone(identifier: "UTC")!)
        for entry in backup.books {
            let url = entry.sources.first { $0.lowercased().hasPrefix("http") } ?? ""
            for highlight in entry.highlights {
                let date = parseISODate(highlight.createdAt).map(stamp.string(from:))
                rows.append(
                    [
                        highlight.text, entry.title, entry.author ?? "", url, highlight.note ?? "",
                        String(highlight.page), date ?? "",
                    ].map(csvCell).joined(separator: ","))
            }
        }
        return rows.joined(separator: "\n") + "\n"
    }
}

/// "2024-03-05 21:14:07" in `zone`: KOReader's dates (local time) and Readwise's.
func secondsStamp(_ zone: TimeZone) -> DateFormatter {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    formatter.timeZone = zone
    return formatter
}

/// Values as a Lua array part: keys 1, 2, 3…
private func luaArray(_ values: [LuaValue]) -> [(key: LuaValue, value: LuaValue)] {
    values.enumerated().map { (LuaValue.number(Double($0.offset + 1)), $0.element) }
}

extension LuaValue {
    /// The value as KOReader's dump.lua writes it: `["key"] = value,` one a line, strings as
    /// Lua's %q quotes them.
    func literal(indent: Int = 0) -> String {
        let pad = String(repeating: "    ", count: indent + 1)
        switch self {
        case .table(let fields):
            guard !fields.isEmpty else { return "{}" }
            return "{"
                + fields.map { "\n\(pad)[\($0.key.literal())] = \($0.value.literal(indent: indent + 1))," }.joined()
                + "\n" + String(repeating: "    ", count: indent) + "}"
        case .string(let text):
            var out = [UInt8(ascii: "\"")]
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\\"), UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), byte]
                case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), byte]
                case UInt8(ascii: "\r"): out += Array("\\r".utf8)
                case 0..<32, 127: out += Array(String(format: "\\%03d", byte).utf8)
                default: out.append(byte)
                }
            }
            return String(decoding: out + [UInt8(ascii: "\"")], as: UTF8.self)
        case .number(let value):
            return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        case .boolean(let value): return value ? "true" : "false"
        case .null: return "nil"
        }
    }
}
