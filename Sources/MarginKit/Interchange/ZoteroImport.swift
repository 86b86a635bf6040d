import Foundation
import MarginCore

extension Library {
    /// Takes in a Zotero data directory (`zotero.sqlite` and `storage/`), never changing it: the
    /// database and its journal are copied to a temporary folder and the copy is read, so Zotero
    /// may be running. Each PDF attachment becomes a book (described by its parent item, filed
    /// in its collection's folder, with its tags), its annotations highlights and memos, the
    /// parent's notes memos. Everything remembers its Zotero library and key: a second import
    /// adds only what is new, and updates what Zotero changed since (its `dateModified` later
    /// than the library's copy). `group`: only that group library (its name or id); nil for
    /// all. Trashed items, image and ink annotations and files margin can't reach are skipped,
    /// each with its reason.
    /// `baseDirectory`: Zotero's base directory for linked files (its setting), against which
    /// paths stored as `attachments:…` are read.
    public func importZotero(
        directory: String, reader: any ZoteroReader, group: String? = nil, baseDirectory: String? = nil,
        dryRun: Bool = false, observer: (any RecognitionObserver)? = nil
    ) async throws -> ImportReport {
        let data = try readZoteroCopy(directory, reader: reader)
        var libraries = data.libraries
        if let group {
            let wanted = group.lowercased()
            libraries = libraries.filter {
                $0.type == "group" && ($0.groupName?.lowercased() == wanted || $0.groupID.map(String.init) == group)
            }
            guard !libraries.isEmpty else {
                let groups = data.libraries.filter { $0.type == "group" }.map {
                    "\($0.groupName ?? "?") (\($0.groupID ?? 0))"
                }
                throw MarginError.invalidArgument(
                    "\(directory) has no group library '\(group)'"
                        + (groups.isEmpty ? " (it has none)" : "; its groups: \(groups.joined(separator: ", "))"))
            }
        }
        var report = ImportReport()
        report.dryRun = dryRun
        let plans = zoteroPlans(
            data, libraries: libraries, directory: directory, baseDirectory: baseDirectory, report: &report)
        var placed = [(book: Book, bookmarks: [Bookmark], highlights: [Highlight], memos: [Memo])]()
        var byBook = [Int64: Int]()
        // Nothing half-imported: the books this import adds go again if a later step fails, and
        // what it changes on books the library had waits until every annotation is placed.
        var added = [Book]()
        var changes = [(book: Book, plan: ZoteroPlan, describe: Bool)]()
        do {
            for plan in plans {
                let sha = try sha256(ofFile: plan.file)
                let known = try await repository.read { store -> Book? in
                    if let book = try store.first(Query<Book>().filter(Book.Fields.sha256 == sha)) { return book }
                    guard let version = try store.first(Query<Version>().filter(Version.Fields.sha256 == sha))
                    else { return nil }
                    return try store.find(Book.self, id: version.bookId)
                }
                if known == nil, let reason = unreadablePDF(plan.file) {
                    // One bad file among many doesn't stop the rest; nothing of it comes in.
                    let with =
                        plan.annotations.isEmpty ? "" : " (\(count(plan.annotations.count, "annotation")) with it)"
                    report.skip(plan.what, reason + with)
                    continue
                }
                var book: Book
                if let known {
                    book = known
                    let newer = plan.modified > known.updatedAt
                    if newer { report.books.updated += 1 } else { report.books.unchanged += 1 }
                    changes.append((known, plan, newer))
                } else {
                    report.books.added += 1
                    if dryRun {
                        // Not in the library yet: everything on it would be new.
                        let kinds = plan.annotations.map(\.kind)
                        report.highlights.added += kinds.filter { $0 == .highlight }.count
                        report.memos.added += kinds.filter { $0 == .memo }.count
                        continue
                    }
                    let fetcher = Fetcher(store: blobs, maxSize: 1 << 40, downloader: downloader)
                    let (info, _) = try await addOne(
                        plan.file, options: AddOptions(title: plan.title, author: plan.author), fetcher: fetcher,
                        observer: observer)
                    added.append(info.book)
                    book = try await describe(info.book, as: plan)
                    changes.append((book, plan, false))
                }
                let annotations = try await place(plan.annotations, in: book, report: &report)
                if let index = byBook[book.id ?? 0] {
                    placed[index].bookmarks += annotations.bookmarks
                    placed[index].highlights += annotations.highlights
                    placed[index].memos += annotations.memos
                } else {
                    byBook[book.id ?? 0] = placed.count
                    placed.append((book, annotations.bookmarks, annotations.highlights, annotations.memos))
                }
            }
            if !dryRun {
                for change in changes {
                    if change.describe { _ = try await describe(change.book, as: change.plan) }
                    if !change.plan.tags.isEmpty {
                        try await database.addTags(
                            normalizedTags(change.plan.tags), toBook: change.book.id ?? 0, now: Date())
                    }
                }
            }
            try await merge(placed, dryRun: dryRun, report: &report)
        } catch {
            if !added.isEmpty { _ = try? await remove(added, confirmed: true) }
            throw error
        }
        return report
    }

    /// Why `add` would refuse the file (not a PDF, cut short, damaged, locked by a password),
    /// or nil: asked before anything is added, so that one bad attachment is skipped with its
    /// reason instead of ending the import.
    private func unreadablePDF(_ file: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: file) else { return "its file can't be read: \(file)" }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 1024)) ?? Data()
        let size = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: size > UInt64(HashingFile.tailSize) ? size - UInt64(HashingFile.tailSize) : 0)
        let tail = (try? handle.readToEnd()) ?? Data()
        do {
            _ = try checkPDF(
                head: Array(head), tail: Array(tail), count: Int64(size), path: file, password: nil, input: file)
            return nil
        } catch {
            return (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
    }

    /// Copies `zotero.sqlite` (and its `-wal` or `-journal`, so what Zotero wrote last is read)
    /// to a temporary folder, reads the copy and removes it.
    private func readZoteroCopy(_ directory: String, reader: any ZoteroReader) throws -> ZoteroData {
        let database = (directory as NSString).appendingPathComponent("zotero.sqlite")
        guard FileManager.default.fileExists(atPath: database) else {
            throw MarginError.invalidArgument(
                "\(directory) is not a Zotero data directory: it has no zotero.sqlite (Zotero shows its own under Settings → Advanced → Files and Folders)"
            )
        }
        let folder = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let copy = (folder as NSString).appendingPathComponent("zotero.sqlite")
        for suffix in ["", "-wal", "-journal"] where FileManager.default.fileExists(atPath: database + suffix) {
            do {
                try FileManager.default.copyItem(atPath: database + suffix, toPath: copy + suffix)
            } catch {
                throw MarginError.io("cannot read \(database + suffix): \(error.localizedDescription)")
            }
        }
        do {
            return try reader.read(databaseAt: copy)
        } catch MarginError.invalidBackup(let message) {
            throw MarginError.invalidBackup("\(database): \(message)")
        }
    }

    private func makeTemporaryFolder() throws -> String {
        let folder = (NSTemporaryDirectory() as NSString).appendingPathComponent("margin-zotero-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw MarginError.io("cannot make a temporary folder: \(error.localizedDescription)")
        }
        return folder
    }

    /// Describes a book as its Zotero item does (the library's copy older than Zotero's); it is
    /// then as of Zotero's change, or later: the next import finds nothing newer.
    private func describe(_ book: Book, as plan: ZoteroPlan) async throws -> Book {
        try await database.updateMetadata(ofBook: book.id ?? 0, now: max(Date(), plan.modified)) { store, book in
            if let title = plan.title { book.title = title }
            if let author = plan.author { book.author = author }
            if let folder = plan.folder { book.folder = folder }
            if let year = plan.year {
                book.year = year
                book.yearSource = YearSource.zotero
            }
            if let doi = plan.doi { book.doi = doi }
            if let venue = plan.venue { book.venue = venue }
            if let publisher = plan.publisher { book.publisher = publisher }
            if let type = plan.workType { book.workType = type }
            if let key = plan.citationKey {
                var wanted = book
                wanted.citationKey = key
                book.citationKey = try store.unusedCitationKey(for: wanted)
            }
        }
    }
}

/// One PDF attachment to take in: its file, its description, and what is on it.
struct ZoteroPlan {
    /// The attachment, for messages.
    var what: String
    var file: String
    var modified: Date
    var title: String?
    var author: String?
    var folder: String?
    var tags: [String]
    var year: Int?
    var doi: String?
    var venue: String?
    var publisher: String?
    var citationKey: String?
    var workType: String?
    var annotations: [ForeignAnnotation]
}

/// Zotero's item types as margin's work types (Crossref's names).
private let zoteroWorkTypes: [String: String] = [
    "journalArticle": "journal-article", "magazineArticle": "journal-article", "newspaperArticle": "journal-article",
    "conferencePaper": "proceedings-article", "book": "book", "bookSection": "book-chapter", "thesis": "dissertation",
    "report": "report", "preprint": "posted-content", "dataset": "dataset", "standard": "standard",
    "encyclopediaArticle": "reference-entry", "dictionaryEntry": "reference-entry",
]

extension Library {
    /// What to take in from the chosen libraries, attachment by attachment; what is left out goes
    /// to `report.skipped`.
    func zoteroPlans(
        _ data: ZoteroData, libraries: [ZoteroData.Library], directory: String, baseDirectory: String?,
        report: inout ImportReport
    ) -> [ZoteroPlan] {
        let chosen = Dictionary(libraries.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let items = Dictionary(data.items.map { ($0.common.id, $0) }, uniquingKeysWith: { first, _ in first })
        let collections = Dictionary(data.collections.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        func path(of collection: ZoteroData.Collection) -> String {
            var names = [collection.name]
            var parent = collection.parentID
            var seen: Set<Int64> = [collection.id]
            while let id = parent, let up = collections[id], seen.insert(id).inserted {
                names.insert(up.name, at: 0)
                parent = up.parentID
            }
            return names.joined(separator: "/")
        }
        var folders = [Int64: [String]]()
        for collection in data.collections {
            for item in collection.itemIDs { folders[item, default: []].append(path(of: collection)) }
        }
        func origin(_ common: ZoteroData.Common) -> String {
            let library = chosen[common.libraryID]
            return library?.type == "group"
                ? "zotero group \(library?.groupID ?? 0) \(common.key)" : "zotero user \(common.key)"
        }
        var notesByParent = [Int64: [ZoteroData.Note]]()
        for note in data.notes {
            guard chosen[note.common.libraryID] != nil else { continue }
            guard let parent = note.parentID else {
                report.skip("note \(note.common.key)", "a standalone note, on no PDF")
                continue
            }
            if note.common.trashed {
                report.skip("note \(note.common.key)", "in the trash")
                continue
            }
            notesByParent[parent, default: []].append(note)
        }
        var annotationsByFile = [Int64: [ZoteroData.Annotation]]()
        for annotation in data.annotations {
            annotationsByFile[annotation.attachmentID, default: []].append(annotation)
        }
        var plans = [ZoteroPlan]()
        var notesTaken = Set<Int64>()
        for attachment in data.attachments {
            guard let library = chosen[attachment.common.libraryID] else { continue }
            let parent = attachment.parentID.flatMap { items[$0] }
            let name = attachment.path.map { ($0.hasPrefix("storage:") ? String($0.dropFirst(8)) : $0) }
            let label = parent?.fields["title"] ?? attachment.title ?? name ?? attachment.common.key
            let what = "attachment \(attachment.common.key) (\(label))"
            let isPDF =
                attachment.contentType == "application/pdf"
                || (attachment.contentType == nil && name?.lowercased().hasSuffix(".pdf") == true)
            guard isPDF else {
                report.skip(what, "not a PDF (\(attachment.contentType ?? "no type"))")
                continue
            }
            if attachment.common.trashed || parent?.common.trashed == true {
                report.skip(what, "in the trash")
                continue
            }
            let file: String
            switch attachment.linkMode {
            case 0, 1:
                guard let name, !name.isEmpty, !name.contains("/"), name != "..", name != "." else {
                    report.skip(what, "it names no file")
                    continue
                }
                file = [directory, "storage", attachment.common.key, name].joined(separator: "/")
            case 2:
                let stored = attachment.path ?? ""
                if stored.hasPrefix("/") {
                    file = stored
                } else if stored.hasPrefix("attachments:"), let base = baseDirectory {
                    file = (base as NSString).appendingPathComponent(String(stored.dropFirst(12)))
                } else {
                    report.skip(
                        what,
                        "a linked file relative to Zotero's base directory (\(stored.isEmpty ? "no path" : stored)); give that directory with --base-dir"
                    )
                    continue
                }
            default:
                report.skip(what, "a link to a web page, not a file")
                continue
            }
            guard FileManager.default.isReadableFile(atPath: file) else {
                report.skip(what, "its file is missing: \(file)")
                continue
            }
            var annotations = [ForeignAnnotation]()
            for annotation in annotationsByFile[attachment.common.id] ?? [] {
                let kinds = [1: "highlight", 2: "note", 3: "image", 4: "ink", 5: "underline", 6: "text"]
                let kind = kinds[annotation.type] ?? "type \(annotation.type)"
                let subject = "annotation \(annotation.common.key) (\(kind)) of \(label)"
                if annotation.common.trashed {
                    report.skip(subject, "in the trash")
                    continue
                }
                guard [1, 2, 5, 6].contains(annotation.type) else {
                    report.skip(subject, "\(kind) annotations have no place in margin")
                    continue
                }
                guard let position = ZoteroPosition(annotation.position) else {
                    report.skip(subject, "its position is not one margin can read: \(annotation.position.prefix(80))")
                    continue
                }
                let highlight = annotation.type == 1 || annotation.type == 5
                annotations.append(
                    ForeignAnnotation(
                        kind: highlight ? .highlight : .memo, origin: origin(annotation.common), what: subject,
                        page: position.pageIndex + 1, text: highlight ? annotation.text : nil,
                        rects: highlight ? position.rects : [], note: annotation.comment, color: annotation.color,
                        author: annotation.authorName, created: annotation.common.dateAdded,
                        modified: annotation.common.dateModified))
            }
            // The parent's notes go on its first PDF.
            if let parentID = attachment.parentID, notesTaken.insert(parentID).inserted {
                for note in notesByParent[parentID] ?? [] {
                    let text: String
                    do { text = try markdown(fromHTML: note.html) } catch {
                        report.skip("note \(note.common.key)", "its HTML is unreadable: \(error.localizedDescription)")
                        continue
                    }
                    annotations.append(
                        ForeignAnnotation(
                            kind: .memo, origin: origin(note.common), what: "note \(note.common.key) of \(label)",
                            page: nil, note: text, created: note.common.dateAdded,
                            modified: note.common.dateModified))
                }
            }
            let fields = parent?.fields ?? [:]
            let extra = zoteroExtra(fields["extra"] ?? "")
            let creators = parent?.creators ?? []
            let authors = creators.filter { $0.type == "author" }
            let names = (authors.isEmpty ? creators : authors).map(\.name).filter { !$0.isEmpty }
            let groupFolder = library.type == "group" ? library.groupName.map { $0 + "/" } ?? "" : ""
            let folder =
                (folders[parent?.common.id ?? attachment.common.id] ?? []).sorted().first.map { groupFolder + $0 }
                ?? (groupFolder.isEmpty ? nil : String(groupFolder.dropLast()))
            plans.append(
                ZoteroPlan(
                    what: what, file: file,
                    modified: max(parent?.common.dateModified ?? .distantPast, attachment.common.dateModified),
                    title: nonEmpty(fields["title"] ?? attachment.title ?? ""),
                    author: names.isEmpty ? nil : names.joined(separator: ", "), folder: folder,
                    tags: (parent?.tags ?? []) + attachment.tags, year: zoteroYear(fields["date"]),
                    doi: (fields["DOI"] ?? extra["doi"]).flatMap(Identifiers.parseDOI),
                    venue: nonEmpty(
                        fields["publicationTitle"] ?? fields["proceedingsTitle"] ?? fields["bookTitle"] ?? ""),
                    publisher: nonEmpty(fields["publisher"] ?? ""),
                    citationKey: nonEmpty(fields["citationKey"] ?? extra["citation key"] ?? ""),
                    workType: parent.flatMap { zoteroWorkTypes[$0.common.typeName] }, annotations: annotations))
        }
        return plans
    }
}

/// Where a Zotero annotation is: `{"pageIndex": 0, "rects": [[x1, y1, x2, y2], …]}`.
struct ZoteroPosition: Decodable {
    var pageIndex: Int
    var rects: [[Double]]

    init?(_ json: String) {
        guard let value = try? JSONDecoder().decode(ZoteroPosition.self, from: Data(json.utf8)), value.pageIndex >= 0
        else { return nil }
        self = value
    }

    enum CodingKeys: String, CodingKey { case pageIndex, rects }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pageIndex = try c.decode(Int.self, forKey: .pageIndex)
        rects = try c.decodeIfPresent([[Double]].self, forKey: .rects) ?? []
    }
}

/// The `Key: value` lines of Zotero's Extra field, by lowercased key.
func zoteroExtra(_ text: String) -> [String: String] {
    var values = [String: String]()
    for line in text.split(whereSeparator: \.isNewline) {
        guard let colon = line.firstIndex(of: ":") else { continue }
        let key = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        if !key.isEmpty, !value.isEmpty, values[key] == nil { values[key] = value }
    }
    return values
}

/// The year of a Zotero date: it stores "2019-05-14 May 14, 2019" (normalized, then as typed),
/// or "0000-00-00 spring 2019" when only the text has one.
func zoteroYear(_ date: String?) -> Int? {
    guard let date else { return nil }
    if let year = Int(date.prefix(4)), year > 0, date.count >= 4 { return year }
    var digits = ""
    for character in date {
        if character.isASCII && character.isNumber {
            digits.append(character)
            if digits.count == 4, let year = Int(digits), year >= 1000 { return year }
        } else {
            digits = ""
        }
    }
    return nil
}
