import Foundation
import MarginCore

/// The W3C Web Annotation Data Model (https://www.w3.org/TR/annotation-model/), as JSON-LD.
enum WebAnnotation {
    static let context = "http://www.w3.org/ns/anno.jsonld"
    /// The PDF fragment identifiers (`page=N`), RFC 3778.
    static let pdfFragments = "http://tools.ietf.org/rfc/rfc3778"
}

extension Library {
    /// The books' annotations as one W3C AnnotationCollection: each highlight targets its book
    /// (its web address, else `urn:sha256:…`) with a TextQuoteSelector (the words and a few
    /// around them) and a FragmentSelector (`page=N`) refined by a TextPositionSelector (where
    /// the words are in the page's text); its note is a TextualBody, its colour a style class.
    /// Bookmarks are `bookmarking` a page, memos `commenting` a page or the book.
    public func webAnnotations(_ books: [Book], now: Date = Date()) async throws -> String {
        let backup = try await backup(books, now: now)
        var items = [[String: Any]]()
        var colors = Set<String>()
        for (book, entry) in zip(books, backup.books) {
            let source =
                entry.sources.first { $0.lowercased().hasPrefix("https://") || $0.lowercased().hasPrefix("http://") }
                ?? "urn:sha256:\(book.sha256)"
            let texts = Dictionary(
                try await pageTexts(of: book).map { ($0.number, SearchableText($0.text)) },
                uniquingKeysWith: { first, _ in first })
            func annotation(
                _ uuid: String, motivation: String, created: String, modified: String, author: String?,
                body: String?, target: Any
            ) -> [String: Any] {
                var item: [String: Any] = [
                    "id": "urn:uuid:\(uuid)", "type": "Annotation", "motivation": motivation, "created": created,
                    "modified": modified, "target": target,
                ]
                if let author { item["creator"] = ["type": "Person", "name": author] }
                if let body {
                    item["body"] = [
                        "type": "TextualBody", "value": body, "format": "text/plain", "purpose": motivation,
                    ]
                }
                return item
            }
            func page(_ number: Int, refinedBy: [String: Any]? = nil) -> [String: Any] {
                var selector: [String: Any] = [
                    "type": "FragmentSelector", "conformsTo": WebAnnotation.pdfFragments, "value": "page=\(number)",
                ]
                if let refinedBy { selector["refinedBy"] = refinedBy }
                return selector
            }
            for highlight in entry.highlights {
                var quote: [String: Any] = ["type": "TextQuoteSelector", "exact": highlight.text]
                if !highlight.prefix.isEmpty { quote["prefix"] = highlight.prefix }
                if !highlight.suffix.isEmpty { quote["suffix"] = highlight.suffix }
                var position: [String: Any]?
                if let text = texts[highlight.page],
                    let found = bestOccurrence(
                        of: foldedTerm(highlight.text), between: foldedTerm(highlight.prefix),
                        and: foldedTerm(highlight.suffix), in: text)
                {
                    let raw = text.rawRange(found.range)
                    position = ["type": "TextPositionSelector", "start": raw.lowerBound, "end": raw.upperBound]
                }
                let style = "c-" + highlight.color.dropFirst()
                colors.insert(highlight.color)
                items.append(
                    annotation(
                        highlight.uuid, motivation: highlight.note == nil ? "highlighting" : "commenting",
                        created: highlight.createdAt, modified: highlight.updatedAt, author: highlight.author,
                        body: highlight.note,
                        target: [
                            "type": "SpecificResource", "source": source, "styleClass": style,
                            "selector": [quote, page(highlight.page, refinedBy: position)],
                        ]))
            }
            for bookmark in entry.bookmarks {
                items.append(
                    annotation(
                        bookmark.uuid, motivation: "bookmarking", created: bookmark.createdAt,
                        modified: bookmark.updatedAt, author: bookmark.author, body: bookmark.label,
                        target: ["type": "SpecificResource", "source": source, "selector": page(bookmark.page)]))
            }
            for memo in entry.memos {
                let target: Any =
                    memo.page.map { ["type": "SpecificResource", "source": source, "selector": page($0)] } ?? source
                items.append(
                    annotation(
                        memo.uuid, motivation: "commenting", created: memo.createdAt, modified: memo.updatedAt,
                        author: memo.author, body: memo.text, target: target))
            }
        }
        let identity = stableUUID("collection", books.map { $0.uuid.uuidString }.joined(separator: " "))
        var collection: [String: Any] = [
            "@context": WebAnnotation.context, "id": "urn:uuid:\(identity.uuidString.lowercased())",
            "type": "AnnotationCollection", "label": "Annotations from margin", "total": items.count,
            "generated": isoDate(now), "generator": ["type": "Software", "name": "margin"],
            "first": [
                "id": "urn:uuid:\(identity.uuidString.lowercased())#page1", "type": "AnnotationPage", "startIndex": 0,
                "items": items,
            ],
        ]
        if !colors.isEmpty {
            collection["stylesheet"] = [
                "type": "CssStylesheet",
                "value": colors.sorted().map { ".c-\($0.dropFirst()) { background-color: \($0); }" }.joined(
                    separator: " "),
            ]
        }
        let data = try JSONSerialization.data(
            withJSONObject: collection, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// Takes in W3C Web Annotations (one, an array, an AnnotationCollection or AnnotationPage)
    /// or Hypothesis's export (its API's annotations: `uri`, `text`, `target[].selector`).
    /// Each goes to the book its target names: by web address, `urn:sha256:…` or DOI. A quote
    /// is found in the book's text (on the page a `page=N` fragment names, else wherever its
    /// words and context are); an annotation with a `urn:uuid:` id keeps that UUID.
    public func importWebAnnotations(_ data: Data, name: String, dryRun: Bool = false) async throws -> ImportReport {
        let json: Any
        do { json = try JSONSerialization.jsonObject(with: data) } catch {
            // Foundation says where in its debug description; its localized one says nothing.
            let said = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
            throw MarginError.invalidBackup(
                "\(name) is not JSON" + (said.map { ": " + $0.trimmingCharacters(in: .punctuationCharacters) } ?? ""))
        }
        let annotations = webAnnotationItems(json)
        guard !annotations.isEmpty else {
            throw MarginError.invalidBackup(
                "\(name) holds no annotation (a W3C Annotation, an AnnotationCollection or AnnotationPage, or Hypothesis's export)"
            )
        }
        var report = ImportReport()
        report.dryRun = dryRun
        let books = try await allBooks()
        let sources = try await repository.read { store in try store.all(Source.self) }
        var byBook = [Int64: [ForeignAnnotation]]()
        for (index, item) in annotations.enumerated() {
            let what = (item["id"] as? String).map { "annotation \($0)" } ?? "annotation \(index + 1) of \(name)"
            guard let foreign = webAnnotation(item, what: what, report: &report) else { continue }
            guard let book = resolveTarget(foreign.source, doi: foreign.doi, books: books, sources: sources) else {
                report.skip(what, "no book in the library is \(foreign.source ?? foreign.doi ?? "its target")")
                continue
            }
            byBook[book.id ?? 0, default: []].append(foreign.annotation)
        }
        var placed = [(book: Book, bookmarks: [Bookmark], highlights: [Highlight], memos: [Memo])]()
        for book in books {
            guard let items = byBook[book.id ?? 0] else { continue }
            let own = try await place(items, in: book, report: &report)
            placed.append((book, own.bookmarks, own.highlights, own.memos))
        }
        try await merge(placed, dryRun: dryRun, report: &report)
        return report
    }

    private func resolveTarget(_ source: String?, doi: String?, books: [Book], sources: [Source]) -> Book? {
        if let source {
            let lowered = source.lowercased()
            if lowered.hasPrefix("urn:sha256:") {
                let sha = String(lowered.dropFirst(11))
                return books.first { $0.sha256 == sha }
            }
            let bare = source.split(separator: "#", maxSplits: 1).first.map(String.init) ?? source
            if let match = sources.first(where: { $0.url == bare }) {
                return books.first { $0.id == match.bookId }
            }
            if let parsed = Identifiers.parseDOI(source), let book = books.first(where: { $0.doi == parsed }) {
                return book
            }
        }
        if let doi, let parsed = Identifiers.parseDOI(doi) { return books.first { $0.doi == parsed } }
        return nil
    }

    /// One annotation as margin reads it: its target's source (and DOI), and what it is.
    private func webAnnotation(_ item: [String: Any], what: String, report: inout ImportReport) -> (
        source: String?, doi: String?, annotation: ForeignAnnotation
    )? {
        // Hypothesis: `uri`, `text`, `target: [{source, selector}]`, `updated`, `user`.
        let targets = (item["target"] as? [Any]) ?? (item["target"].map { [$0] } ?? [])
        let target = targets.first
        var source =
            (target as? String) ?? ((target as? [String: Any])?["source"] as? String) ?? (item["uri"] as? String)
        var selectors = [[String: Any]]()
        if let object = target as? [String: Any] {
            if let list = object["selector"] as? [[String: Any]] {
                selectors = list
            } else if let one = object["selector"] as? [String: Any] {
                selectors = [one]
            }
        }
        // A fragment on the source itself ("…pdf#page=3").
        var page: Int?
        if let iri = source, let hash = iri.firstIndex(of: "#") {
            page = pageFragment(String(iri[iri.index(after: hash)...]))
            source = String(iri[..<hash])
        }
        var quote: [String: Any]?
        // A TextPositionSelector refining a page's fragment counts in that page's text (as
        // margin writes it); one on its own counts in the whole document's (as Hypothesis).
        var position: (start: Int, inPage: Bool)?
        for selector in selectors {
            let refined = selector["refinedBy"] as? [String: Any]
            for (one, inPage) in [(selector, false)] + (refined.map { [($0, true)] } ?? []) {
                switch one["type"] as? String {
                case "TextQuoteSelector": quote = one
                case "FragmentSelector": page = (one["value"] as? String).flatMap(pageFragment) ?? page
                case "TextPositionSelector":
                    if let start = one["start"] as? Int, start >= 0 { position = (start, inPage) }
                default: break
                }
            }
        }
        let bodies = (item["body"] as? [Any]) ?? (item["body"].map { [$0] } ?? [])
        var note = bodies.compactMap { body -> String? in
            if let text = body as? String { return text }
            guard let object = body as? [String: Any], object["purpose"] as? String != "tagging" else { return nil }
            return object["value"] as? String
        }.joined(separator: "\n\n")
        if note.isEmpty, let text = item["text"] as? String { note = text }
        let creator = item["creator"]
        let author =
            (creator as? String) ?? ((creator as? [String: Any])?["name"] as? String)
            ?? (item["user"] as? String).map { $0.hasPrefix("acct:") ? String($0.dropFirst(5)) : $0 }
        let created = (item["created"] as? String).flatMap(parseISODate) ?? Date(timeIntervalSince1970: 0)
        let modified = ((item["modified"] ?? item["updated"]) as? String).flatMap(parseISODate) ?? created
        let motivation = (item["motivation"] as? String) ?? ((item["motivation"] as? [String])?.first)
        let id = item["id"] as? String
        let kind: ForeignAnnotation.Kind =
            quote != nil ? .highlight : motivation == "bookmarking" ? .bookmark : .memo
        var color: String?
        if let style = (target as? [String: Any])?["styleClass"] as? String, style.hasPrefix("c-") {
            color = "#" + style.dropFirst(2)
        }
        var annotation = ForeignAnnotation(
            kind: kind, origin: "web-annotation " + (id ?? "\(source ?? "") \(quote?["exact"] ?? "") \(created)"),
            what: what, page: page, text: quote?["exact"] as? String, note: note.isEmpty ? nil : note, color: color,
            author: author, created: created, modified: modified)
        annotation.prefix = quote?["prefix"] as? String
        annotation.suffix = quote?["suffix"] as? String
        // In a page's text only when that page is the one the annotation names.
        annotation.position = position.map(\.start)
        annotation.positionInPage = position?.inPage == true && page != nil
        if let id, id.lowercased().hasPrefix("urn:uuid:") {
            annotation.uuid = UUID(uuidString: String(id.dropFirst(9)))
        }
        if kind == .memo, annotation.note == nil {
            report.skip(what, "it neither quotes the text nor says anything")
            return nil
        }
        let doi = ((item["document"] as? [String: Any])?["highwire"] as? [String: Any])?["doi"] as? [String]
        return (source, doi?.first, annotation)
    }
}

/// The annotations of a W3C document (one, an array, a collection's pages, a page's items) or
/// of Hypothesis's export (an array, or `{"rows": […]}` as its API answers).
func webAnnotationItems(_ json: Any) -> [[String: Any]] {
    if let list = json as? [Any] { return list.flatMap(webAnnotationItems) }
    guard let object = json as? [String: Any] else { return [] }
    let types = (object["type"] as? [String]) ?? [(object["type"] as? String) ?? ""]
    if types.contains("AnnotationCollection") {
        var items = [[String: Any]]()
        var page = object["first"] as? [String: Any]
        while let current = page {
            items += (current["items"] as? [Any] ?? []).flatMap(webAnnotationItems)
            page = current["next"] as? [String: Any]
        }
        return items
    }
    if types.contains("AnnotationPage") { return (object["items"] as? [Any] ?? []).flatMap(webAnnotationItems) }
    if let rows = object["rows"] as? [Any] { return rows.flatMap(webAnnotationItems) }
    if types.contains("Annotation") || object["target"] != nil { return [object] }
    return []
}

/// The page of a PDF fragment identifier ("page=3", "page=3&zoom=100").
func pageFragment(_ fragment: String) -> Int? {
    for part in fragment.split(separator: "&") where part.hasPrefix("page=") {
        if let page = Int(part.dropFirst(5)), page >= 1 { return page }
    }
    return nil
}
