import Foundation
import Hummingbird
import MarginCore
import MarginKit
import NIOCore

/// The JSON API of CLI.md's "reader in a browser": the CLI's `--json` shapes over HTTP.
extension ReaderServer {
    func addAPI(to router: Router<ReaderContext>) {
        let api = router.group("api")
        api.get("books") { request, _ in try await self.books(request) }
        api.get("books/{id}") { _, context in try jsonResponse(try await library.info(try await book(context))) }
        api.get("search") { request, context in try await self.search(request, context) }
        api.get("books/{id}/pages/{page}.png") { request, context in
            try await self.pageImage(request, context, format: .png)
        }
        api.get("books/{id}/pages/{page}.svg") { request, context in
            try await self.pageImage(request, context, format: .svg)
        }
        api.get("books/{id}/pages") { _, context in
            try jsonResponse(try await library.pageGuide(try await book(context)))
        }
        api.get("books/{id}/outline") { _, context in
            try jsonResponse(try await library.tableOfContents(try await book(context)))
        }
        api.get("books/{id}/pages/{page}/text") { _, context in
            let book = try await book(context)
            return try jsonResponse(try await library.pageLayout(book, page: try page(context)))
        }
        api.get("books/{id}/export") { request, context in try await self.export(request, context) }
        addAnnotationAPI(to: api)
    }

    private func addAnnotationAPI(to api: RouterGroup<ReaderContext>) {
        api.get("books/{id}/highlights") { _, context in
            try jsonResponse(try await library.views(try await library.highlights(of: try await book(context))))
        }
        api.post("books/{id}/highlights") { request, context in
            let book = try await book(context)
            let body = try await decodeBody(NewHighlight.self, request, context)
            return try jsonResponse(try await addHighlight(body, to: book), status: .created)
        }
        api.patch("highlights/{id}") { request, context in
            let body = try await decodeBody(HighlightChange.self, request, context)
            let highlight = try await library.editHighlight(
                id: try annotationID(context), note: body.note, color: body.color, shared: body.shared)
            return try jsonResponse(try await library.view(highlight))
        }
        api.delete("highlights/{id}") { _, context in
            try jsonResponse(try await library.view(try await library.removeHighlight(id: try annotationID(context))))
        }

        api.get("books/{id}/bookmarks") { _, context in
            try jsonResponse(try await library.views(try await library.bookmarks(of: try await book(context))))
        }
        api.post("books/{id}/bookmarks") { request, context in
            let body = try await decodeBody(NewBookmark.self, request, context)
            return try await created(
                context,
                byId: { [library] in
                    try await library.addBookmarkShown(
                        toBook: $0, page: body.page, label: body.label, shared: body.shared ?? false)
                },
                byBook: { [library] in
                    try await library.addBookmarkShown(
                        $0, page: body.page, label: body.label, shared: body.shared ?? false)
                })
        }
        api.patch("bookmarks/{id}") { request, context in
            let body = try await decodeBody(BookmarkChange.self, request, context)
            return try jsonResponse(
                try await library.view(
                    try await library.editBookmark(
                        id: try annotationID(context), label: body.label, shared: body.shared)))
        }
        api.delete("bookmarks/{id}") { _, context in
            try jsonResponse(try await library.view(try await library.removeBookmark(id: try annotationID(context))))
        }

        api.get("books/{id}/memos") { _, context in
            try jsonResponse(try await library.views(try await library.memos(of: try await book(context))))
        }
        api.post("books/{id}/memos") { request, context in
            let body = try await decodeBody(NewMemo.self, request, context)
            return try await created(
                context,
                byId: { [library] in
                    try await library.addMemoShown(
                        toBook: $0, page: body.page, text: body.text, shared: body.shared ?? false)
                },
                byBook: { [library] in
                    try await library.addMemoShown($0, page: body.page, text: body.text, shared: body.shared ?? false)
                })
        }
        api.patch("memos/{id}") { request, context in
            let body = try await decodeBody(MemoChange.self, request, context)
            return try jsonResponse(
                try await library.view(
                    try await library.editMemo(id: try annotationID(context), text: body.text, shared: body.shared)))
        }
        api.delete("memos/{id}") { _, context in
            try jsonResponse(try await library.view(try await library.removeMemo(id: try annotationID(context))))
        }
    }

    // MARK: Handlers

    private func books(_ request: Request) async throws -> Response {
        let query = request.query
        var filter = BookFilter(folder: query.get("folder"), tag: query.get("tag"))
        if let sort = query.get("sort") {
            guard let parsed = BookSort(rawValue: sort) else {
                throw MarginError.invalidArgument(
                    "sort must be one of \(BookSort.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            filter.sort = parsed
        }
        filter.limit = try count(query.get("limit"), "limit")
        filter.offset = try count(query.get("offset"), "offset")
        return try jsonResponse(try await library.list(filter))
    }

    private func search(_ request: Request, _ context: ReaderContext) async throws -> Response {
        let query = request.query
        guard let text = query.get("q"), !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw MarginError.invalidArgument("say what to search for: /api/search?q=…")
        }
        var options = SearchOptions(
            regex: flag(query.get("regex")), caseSensitive: flag(query.get("case-sensitive")),
            wholeWord: flag(query.get("whole-word")), annotations: flag(query.get("annotations")))
        if let limit = try count(query.get("limit"), "limit") { options.limit = limit }
        if let selector = query.get("book") { options.bookId = try await library.resolve(selector).id }
        options.folder = nonEmptyParameter(query.get("folder"))
        options.tag = nonEmptyParameter(query.get("tag"))
        options.stems = !flag(query.get("exact"))
        if let lang = nonEmptyParameter(query.get("lang"))?.lowercased() {
            guard Languages.known.contains(lang) else {
                throw MarginError.invalidArgument(Languages.unknown(lang))
            }
            options.lang = lang
        }
        options.timeLimit = Self.searchTimeLimit
        options.stop = context.clientGone()
        let results = try await library.search(text, options: options)
        return try RangedHit.response(results.hits.map(RangedHit.init))
    }

    private func pageImage(_ request: Request, _ context: ReaderContext, format: RenderFormat) async throws
        -> Response
    {
        let book = try await book(context)
        let number = try page(context)
        let dpiText = request.query.get("dpi")
        let dpi =
            try dpiText.map { text -> Double in
                guard let value = Double(text), value.isFinite else {
                    throw MarginError.invalidArgument("dpi must be a number, not '\(text)'")
                }
                return value
            } ?? 110
        // A page that went over the limits before answers from memory, without drawing again.
        let key = "\(book.sha256)-\(number)-\(format.rawValue)"
        if let message = failures.remembered(key, dpi: dpi) { throw MarginError.popplerLimit(message) }
        let image: PageImage
        do {
            image = try await library.pageImage(
                book, page: number, format: format, dpi: dpi, stop: context.clientGone())
        } catch MarginError.popplerLimit(let message) {
            failures.remember(key, dpi: dpi, message)
            throw MarginError.popplerLimit(message)
        }
        var headers = HTTPFields()
        headers[.eTag] = image.etag
        headers[.cacheControl] = "private, max-age=31536000, immutable"
        if let match = request.headers[.ifNoneMatch],
            match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == image.etag })
        {
            return Response(status: .notModified, headers: headers)
        }
        return bytesResponse(image.data, type: image.contentType, headers: headers)
    }

    private func export(_ request: Request, _ context: ReaderContext) async throws -> Response {
        let book = try await book(context)
        let name = request.query.get("format") ?? "markdown"
        guard let format = ExportFormat(rawValue: name) else {
            throw MarginError.invalidArgument(
                "format must be one of \(ExportFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let data: Data
        let type: String
        switch format {
        case .pdf:
            let folder = NSTemporaryDirectory() + "margin-export-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let written = try await library.exportPDF(book, to: folder + "/annotated.pdf", force: true)
            data = try Data(contentsOf: URL(fileURLWithPath: written))
            type = "application/pdf"
        default:
            data = Data(try await library.exportText([book], format: format).utf8)
            switch format {
            case .json: type = "application/json; charset=utf-8"
            case .webAnnotation: type = "application/ld+json; profile=\"http://www.w3.org/ns/anno.jsonld\""
            case .csv, .readwise: type = "text/csv; charset=utf-8"
            case .bibtex: type = "application/x-bibtex; charset=utf-8"
            case .xfdf: type = "application/vnd.adobe.xfdf; charset=utf-8"
            case .koreader: type = "text/x-lua; charset=utf-8"
            default: type = "text/markdown; charset=utf-8"
            }
        }
        var headers = HTTPFields()
        let file = format == .koreader ? "metadata.pdf.lua" : "\(slug(book.title)).\(format.fileExtension)"
        headers[.contentDisposition] = "attachment; filename=\"\(file)\""
        return bytesResponse(data, type: type, headers: headers)
    }

    private func addHighlight(_ body: NewHighlight, to book: Book) async throws -> AnnotationView<Highlight> {
        let color = try body.color.map(HighlightColor.parse) ?? HighlightColor.defaultColor
        if let start = body.start, let end = body.end {
            var selection = HighlightSelection(page: body.page, start: start, end: end)
            selection.color = color
            selection.note = body.note
            selection.shared = body.shared ?? false
            return try await library.addHighlightShown(book, selection)
        }
        guard let text = body.text else {
            throw MarginError.invalidArgument("a highlight needs {page, start, end} or {page, text}")
        }
        var request = HighlightRequest(text: text)
        request.page = body.page
        request.color = color
        request.note = body.note
        request.shared = body.shared ?? false
        return try await library.addHighlightsShown(book, request)[0]
    }

    // MARK: Parameters

    /// The request's JSON body as `type`; a body over the upload limit is a 413, malformed JSON a
    /// 400 that says what is wrong.
    private func decodeBody<T: Decodable>(_ type: T.Type, _ request: Request, _ context: ReaderContext)
        async throws -> T
    {
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
    }

    /// 201 with what was added to the book the path names: by its id, in the transaction that
    /// saves it (`byId` answers nil for no such id), else by `book(context)`'s other ways.
    func created<View: Encodable>(
        _ context: ReaderContext, byId: (Int64) async throws -> View?, byBook: (Book) async throws -> View
    ) async throws -> Response {
        if let id = Int64(context.parameters.get("id") ?? ""), let view = try await byId(id) {
            return try jsonResponse(view, status: .created)
        }
        return try jsonResponse(try await byBook(try await book(context)), status: .created)
    }

    func book(_ context: ReaderContext) async throws -> Book {
        try await library.resolve(try context.parameters.require("id"))
    }

    func page(_ context: ReaderContext) throws -> Int {
        let text = try context.parameters.require("page")
        guard let number = Int(text) else { throw MarginError.invalidArgument("'\(text)' is not a page number") }
        return number
    }

    private func annotationID(_ context: ReaderContext) throws -> Int64 {
        let text = try context.parameters.require("id")
        guard let id = Int64(text) else { throw MarginError.invalidArgument("'\(text)' is not an annotation id") }
        return id
    }

    private func count(_ text: String?, _ name: String) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw MarginError.invalidArgument("\(name) must be a whole number, 0 or more, not '\(text)'")
        }
        return value
    }

    private func flag(_ text: String?) -> Bool {
        guard let text else { return false }
        return ["", "1", "true", "yes", "on"].contains(text.lowercased())
    }
}

/// A search hit with `ranges`: `[start, end)` scalar offsets of the matches in its snippet.
struct RangedHit: Encodable {
    var hit: SearchHit
    var ranges: [[Int]]

    init(_ hit: SearchHit) {
        self.hit = hit
        var ranges = [[Int]]()
        var offset = 0
        var open: Int?
        for scalar in hit.marked.unicodeScalars {
            if scalar == "\u{1}" {
                open = offset
            } else if scalar == "\u{2}" {
                if let start = open { ranges.append([start, offset]) }
                open = nil
            } else {
                offset += 1
            }
        }
        self.ranges = ranges
    }

    enum CodingKeys: String, CodingKey { case ranges }

    /// The hits as `jsonResponse` answers them, written by `PrettyJSON` (the same bytes; with
    /// the encoder, 32 users searching "bayesian" got 738 requests/s, with this 812):
    /// `MARGIN_PLAIN=serve-json` turns it off.
    static func response(_ hits: [RangedHit]) throws -> Response {
        guard FastPaths.isOn("serve-json") else { return try jsonResponse(hits) }
        return jsonResponse(bytes: json(hits).bytes)
    }

    /// The hits as compact JSON.
    static func json(_ hits: [RangedHit]) -> PrettyJSON {
        PrettyJSON.array(hits, bytesEach: 400, compact: true) { $1.hit.write(to: &$0, ranges: $1.ranges) }
    }

    func encode(to encoder: any Encoder) throws {
        try hit.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ranges, forKey: .ranges)
    }
}

// `shared`: seen by the other users of a team library (an addition's default is private; a
// change without it leaves it as it is).

struct NewHighlight: Decodable {
    var page: Int
    var start: Int?
    var end: Int?
    var text: String?
    var color: String?
    var note: String?
    var shared: Bool?
}

struct HighlightChange: Decodable {
    var note: String?
    var color: String?
    var shared: Bool?
}

struct NewBookmark: Decodable {
    var page: Int
    var label: String?
    var shared: Bool?
}

struct BookmarkChange: Decodable {
    var label: String?
    var shared: Bool?
}

struct NewMemo: Decodable {
    var page: Int?
    var text: String
    var shared: Bool?
}

struct MemoChange: Decodable {
    var text: String?
    var shared: Bool?
}
