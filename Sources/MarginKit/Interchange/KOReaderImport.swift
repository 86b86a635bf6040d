import Crypto
import Foundation
import MarginCore

/// KOReader's highlight colours by name, as margin's colours.
let koreaderColors: [String: String] = [
    "yellow": "#ffd400", "red": "#ff6666", "orange": "#f19837", "green": "#5fb236", "blue": "#2ea8e5",
    "purple": "#a28ae5", "gray": "#aaaaaa", "olive": "#88aa33", "cyan": "#33c3d0", "white": "#ffffff",
]

extension Library {
    /// Takes in KOReader's sidecars (`BOOK.sdr/metadata.pdf.lua`, found by walking the folders
    /// given): highlights with their text, note, colour, date and the boxes KOReader kept,
    /// and page bookmarks. Each sidecar goes to the book whose file has KOReader's partial MD5,
    /// else the file name or title it names. A sidecar is read as a Lua table literal, never
    /// run: one with code in it is refused, and nothing is imported.
    public func importKOReader(paths: [String], dryRun: Bool = false) async throws -> ImportReport {
        var files = [String]()
        for path in paths { files += try koreaderSidecars(in: path) }
        guard !files.isEmpty else {
            throw MarginError.invalidArgument(
                "no KOReader sidecar (a metadata.pdf.lua, in a BOOK.sdr folder) in \(paths.joined(separator: ", "))")
        }
        // Every sidecar is read before anything is written.
        let sidecars = try files.map { file -> (String, LuaValue) in
            guard let data = FileManager.default.contents(atPath: file) else {
                throw MarginError.io("cannot read \(file)")
            }
            return (file, try LuaLiteralReader.read(data, name: file))
        }
        var report = ImportReport()
        report.dryRun = dryRun
        let books = try await allBooks()
        var checksums: [String: Book]?
        var placed = [(book: Book, bookmarks: [Bookmark], highlights: [Highlight], memos: [Memo])]()
        for (file, sidecar) in sidecars {
            let folder = ((file as NSString).deletingLastPathComponent as NSString).lastPathComponent
            let document = folder.hasSuffix(".sdr") ? String(folder.dropLast(4)) : nil
            var book: Book?
            if let md5 = sidecar["partial_md5_checksum"]?.string?.lowercased() {
                if checksums == nil { checksums = try await partialMD5s(of: books) }
                book = checksums?[md5]
            }
            if book == nil, let document { book = try await bookWithFile(named: document + ".pdf", in: books) }
            if book == nil, let title = sidecar["doc_props"]?["title"]?.string?.lowercased(), !title.isEmpty {
                book = books.first { $0.title.lowercased() == title }
            }
            guard let book else {
                report.skip(
                    file,
                    "no book in the library matches it (by KOReader's checksum, the file name \(document.map { "'\($0).pdf'" } ?? "") or its title)"
                )
                continue
            }
            let annotations = koreaderAnnotations(sidecar, book: book, file: file)
            let own = try await place(annotations, in: book, report: &report)
            placed.append((book, own.bookmarks, own.highlights, own.memos))
        }
        try await merge(placed, dryRun: dryRun, report: &report)
        return report
    }

    /// The sidecars at `path`: the file itself, or every `metadata.pdf.lua` below a folder.
    private func koreaderSidecars(in path: String) throws -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw MarginError.noSuchFile(path)
        }
        guard isFolder.boolValue else { return [path] }
        var found = [String]()
        let walker = FileManager.default.enumerator(atPath: path)
        while let relative = walker?.nextObject() as? String {
            if (relative as NSString).lastPathComponent == "metadata.pdf.lua" {
                found.append((path as NSString).appendingPathComponent(relative))
            }
        }
        return found.sorted()
    }

    /// KOReader's partial MD5 of each book's current file (those in the cache), by checksum.
    private func partialMD5s(of books: [Book]) async throws -> [String: Book] {
        var sums = [String: Book]()
        for book in books where blobs.contains(book.sha256) {
            if let sum = koreaderPartialMD5(blobs.path(for: book.sha256)) { sums[sum] = sums[sum] ?? book }
        }
        return sums
    }

    /// The book one of whose sources is a file (or address) named `name`.
    private func bookWithFile(named name: String, in books: [Book]) async throws -> Book? {
        let wanted = name.lowercased()
        let ids = try await repository.read { store in
            try store.all(Source.self).filter {
                (URL(string: $0.url)?.lastPathComponent.removingPercentEncoding ?? "").lowercased() == wanted
            }.map(\.bookId)
        }
        return books.first { ids.contains($0.id ?? -1) }
    }

    /// A sidecar's highlights and bookmarks: its `annotations` list (KOReader 2024 and later),
    /// else the older `bookmarks` list.
    func koreaderAnnotations(_ sidecar: LuaValue, book: Book, file: String) -> [ForeignAnnotation] {
        let current = sidecar["annotations"]?.list
        let entries = current ?? sidecar["bookmarks"]?.list ?? []
        let stamp = secondsStamp(TimeZone.current)
        var found = [ForeignAnnotation]()
        for (index, entry) in entries.enumerated() {
            let pos0 = entry["pos0"]
            let page =
                pos0?["page"]?.number ?? entry["page"]?.number ?? entry["pageno"]?.number
            let created = entry["datetime"]?.string.flatMap(stamp.date(from:)) ?? Date(timeIntervalSince1970: 0)
            let modified = entry["datetime_updated"]?.string.flatMap(stamp.date(from:)) ?? created
            // The older list kept the highlighted words in `notes` and the note in `text`.
            let text = current == nil ? entry["notes"]?.string : entry["text"]?.string
            let note = current == nil ? entry["text"]?.string : entry["note"]?.string
            let isHighlight = pos0 != nil || entry["drawer"] != nil || entry["highlighted"] == .boolean(true)
            let what =
                "\((file as NSString).lastPathComponent) entry \(index + 1) (page \(page.map { String(Int($0)) } ?? "?"))"
            let origin = [
                "koreader", book.sha256, isHighlight ? "highlight" : "bookmark", entry["datetime"]?.string ?? "",
                page.map { String(Int($0)) } ?? "", pos0?["x"]?.string ?? "", pos0?["y"]?.string ?? "",
            ].joined(separator: " ")
            let memo = entry["margin_memo"] == .boolean(true)
            var item = ForeignAnnotation(
                kind: isHighlight ? .highlight : memo ? .memo : .bookmark, origin: origin, what: what,
                page: page.map { Int($0) }, text: isHighlight ? text : nil, note: note, created: created,
                modified: modified)
            item.uuid = entry["margin_uuid"]?.string.flatMap(UUID.init(uuidString:))
            // KOReader keeps no author: margin's own sidecars name it beside the UUID.
            item.author = entry["margin_author"]?.string
            if isHighlight {
                let color = entry["color"]?.string?.lowercased()
                item.color = color.flatMap { koreaderColors[$0] } ?? color
                item.boxes = (entry["pboxes"]?.list ?? []).compactMap { box in
                    guard let x = box["x"]?.number, let y = box["y"]?.number, let w = box["w"]?.number,
                        let h = box["h"]?.number
                    else { return nil }
                    return [x, y, w, h]
                }
            } else if !memo, note == nil, let label = text, !label.hasPrefix("Page ") {
                item.note = label
            }
            found.append(item)
        }
        return found
    }
}

/// KOReader's checksum of a document (`util.partialMD5`): the MD5 of 1 KiB read at offset 0
/// and at 1024 × 4^i for i = 0…10, as far as the file goes.
func koreaderPartialMD5(_ path: String) -> String? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? handle.close() }
    var md5 = Insecure.MD5()
    for offset in [0] + (0...10).map({ 1024 << (2 * $0) }) {
        do {
            try handle.seek(toOffset: UInt64(offset))
            guard let sample = try handle.read(upToCount: 1024), !sample.isEmpty else { break }
            md5.update(data: sample)
        } catch {
            break
        }
    }
    return md5.finalize().map { String(format: "%02x", $0) }.joined()
}
