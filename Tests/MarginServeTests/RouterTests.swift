import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MarginCore
import MarginKit
import MarginSQLite
import MarginServe
import NIOCore
import Poppler
import TestSupport
import Testing

/// A library served in process: an in-memory store, fixture PDFs added for real through
/// poppler, and the reader's router (no socket).
final class ServedLibrary: Sendable {
    let folder = TemporaryFolder()
    let library: Library

    init(_ names: String...) async throws {
        PDFEngines.install(PopplerEngine())
        library = try Library(
            store: try LibraryDatabase(), cache: folder.path + "/cache", keyFile: folder.path + "/key",
            configuration: Configuration(), downloader: ClosedNetwork())
        let outcomes = await library.add(names.map { Fixtures.pdf($0) }, options: AddOptions(), jobs: 1)
        for outcome in outcomes { #expect(outcome.ok, "\(outcome.input): \(outcome.error ?? "")") }
    }

    func app(token: String? = nil) -> some ApplicationProtocol {
        Application(router: ReaderServer(library: library, token: token).router())
    }

    /// Everything a user could see change: books, annotations.
    func snapshot() async throws -> String {
        let books = try await library.list().map { "\($0.book.id ?? 0) \($0.book.title) \($0.book.pages)" }
        let highlights = try await library.highlights(of: nil).map { "\($0.page) \($0.text) \($0.rects)" }
        let bookmarks = try await library.bookmarks(of: nil).map { "\($0.page) \($0.label ?? "")" }
        let memos = try await library.memos(of: nil).map { "\($0.page ?? 0) \($0.text)" }
        return (books + highlights + bookmarks + memos).joined(separator: "\n")
    }
}

/// Downloads are never part of serving: a test that reaches for one fails.
struct ClosedNetwork: Downloader {
    func download(_ request: DownloadRequest) async throws -> DownloadResult {
        Issue.record("the server reached for the network: \(request.url)")
        throw MarginError.unreachable(url: request.url, reason: "the network is closed in these tests")
    }
}

extension TestResponse {
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) }
    var object: [String: Any] { json as? [String: Any] ?? [:] }
    var array: [[String: Any]] { json as? [[String: Any]] ?? [] }
    var error: String? { object["error"] as? String }
}

/// What the reader's own script sends with every write.
let jsonType: HTTPFields = [.contentType: "application/json"]

func jsonBody(_ object: Any) -> ByteBuffer {
    ByteBuffer(bytes: (try? JSONSerialization.data(withJSONObject: object)) ?? Data())
}

@Suite struct ReaderAPITests {
    @Test func booksSearchAndPageTextAnswerInTheCLIsShapes() async throws {
        let served = try await ServedLibrary("sample.pdf", "second.pdf")
        try await served.app().test(.router) { client in
            try await client.execute(uri: "/api/books?sort=title", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.array.map { $0["title"] as? String } == ["A Sample Paper", "Field Notes"])
            }
            try await client.execute(uri: "/api/books/1", method: .get) { response in
                #expect(response.object["pages"] as? Int == 3)
                #expect(response.object["sha256"] as? String != nil)
            }
            try await client.execute(uri: "/api/search?q=inverted%20index", method: .get) { response in
                let hits = response.array
                #expect(hits.count == 1)
                #expect(hits.first?["page"] as? Int == 2)
                // `ranges` point at the match inside the snippet, in characters.
                let snippet = try #require(hits.first?["snippet"] as? String)
                let ranges = try #require(hits.first?["ranges"] as? [[Int]])
                let scalars = Array(snippet.unicodeScalars)
                let marked = ranges.map { String(String.UnicodeScalarView(scalars[$0[0]..<$0[1]])).lowercased() }
                #expect(marked.contains("inverted"), "\(snippet) \(ranges)")
            }
            try await client.execute(uri: "/api/books/1/pages/2/text", method: .get) { response in
                let layout = response.object
                let text = try #require(layout["text"] as? String)
                let boxes = try #require(layout["boxes"] as? [[Double]])
                #expect(text.contains("An inverted index maps each word"))
                #expect(boxes.count == text.unicodeScalars.count, "one box per character")
                // Top-left origin: the first line is near the top of the page.
                let height = try #require(layout["height"] as? Double)
                let first = try #require(boxes.first)
                #expect(first[1] < height / 2 && first[3] > first[1])
            }
        }
    }

    @Test func pageImagesAreCachedByETag() async throws {
        let served = try await ServedLibrary("sample.pdf")
        try await served.app().test(.router) { client in
            var etag = ""
            try await client.execute(uri: "/api/books/1/pages/1.png?dpi=50", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/png")
                #expect(Array(Data(response.body.readableBytesView).prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
                #expect(response.headers[.cacheControl]?.contains("immutable") == true)
                etag = response.headers[.eTag] ?? ""
            }
            #expect(!etag.isEmpty)
            try await client.execute(
                uri: "/api/books/1/pages/1.png?dpi=50", method: .get, headers: [.ifNoneMatch: etag]
            ) { response in
                #expect(response.status == .notModified)
                #expect(response.body.readableBytes == 0)
            }
            // Another resolution is another image.
            try await client.execute(uri: "/api/books/1/pages/1.png?dpi=60", method: .get) { response in
                #expect(response.headers[.eTag] != etag)
            }
            try await client.execute(uri: "/api/books/1/pages/1.svg", method: .get) { response in
                #expect(response.headers[.contentType] == "image/svg+xml")
                #expect(String(buffer: response.body).contains("<svg"))
            }
        }
    }

    @Test func aSelectionBecomesAHighlightOfExactlyThoseCharacters() async throws {
        let served = try await ServedLibrary("sample.pdf")
        try await served.app().test(.router) { client in
            var text = ""
            try await client.execute(uri: "/api/books/1/pages/2/text", method: .get) { response in
                text = response.object["text"] as? String ?? ""
            }
            let scalars = Array(text.unicodeScalars)
            let sentence = Array("An inverted index maps each word".unicodeScalars)
            let start = try #require(
                (0...(scalars.count - sentence.count)).first {
                    scalars[$0..<$0 + sentence.count].elementsEqual(sentence)
                })
            try await client.execute(
                uri: "/api/books/1/highlights", method: .post, headers: [.contentType: "application/json"],
                body: jsonBody(["page": 2, "start": start, "end": start + sentence.count, "note": "the core idea"])
            ) { response in
                #expect(response.status == .created, "\(response.object)")
                #expect(response.object["text"] as? String == "An inverted index maps each word")
                #expect(response.object["page"] as? Int == 2)
                #expect(response.object["note"] as? String == "the core idea")
                #expect((response.object["rects"] as? [[Double]])?.count == 1, "one line, one rectangle")
            }
            // The CLI's highlight of that text lands on the same rects: it is refused as already there.
            var request = HighlightRequest(text: "An inverted index maps each word")
            request.page = 2
            do {
                _ = try await served.library.addHighlights(try await served.library.resolve("1"), request)
                Issue.record("the CLI placed the same text elsewhere than the selection")
            } catch MarginError.alreadyHighlighted(_, let page, _) {
                #expect(page == 2)
            }
            #expect(try await served.library.highlights(of: nil).count == 1)
            // Selecting it again is a conflict, not a second highlight.
            try await client.execute(
                uri: "/api/books/1/highlights", method: .post, headers: jsonType,
                body: jsonBody(["page": 2, "start": start, "end": start + sentence.count])
            ) { response in
                #expect(response.status == .conflict, "\(response.object)")
            }
        }
    }
}
