import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MarginCore
import MarginKit
import NIOCore
import Testing

/// Annotations through the API as the reader makes them, and what the CLI's library sees.
@Suite struct AnnotationAPITests {
    @Test func bookmarksMemosAndHighlightsAddEditListAndRemove() async throws {
        let served = try await ServedLibrary("sample.pdf")
        try await served.app().test(.router) { client in
            // Bookmarks.
            var id = 0
            try await client.execute(
                uri: "/api/books/1/bookmarks", method: .post, headers: jsonType,
                body: jsonBody(["page": 3, "label": "rendering"])
            ) { response in
                #expect(response.status == .created)
                #expect(
                    response.object["kind"] as? String == "bookmark"
                        && response.object["label"] as? String == "rendering")
                id = response.object["id"] as? Int ?? 0
            }
            try await client.execute(
                uri: "/api/bookmarks/\(id)", method: .patch, headers: jsonType, body: jsonBody(["label": "cairo"])
            ) {
                response in
                #expect(response.object["label"] as? String == "cairo")
            }
            try await client.execute(uri: "/api/books/1/bookmarks", method: .get) { response in
                #expect(response.array.map { $0["label"] as? String } == ["cairo"])
            }
            #expect(try await served.library.bookmarks(of: nil).map(\.label) == ["cairo"])
            try await client.execute(uri: "/api/bookmarks/\(id)", method: .delete, headers: jsonType) { response in
                #expect(response.status == .ok && response.object["id"] as? Int == id)
            }
            #expect(try await served.library.bookmarks(of: nil).isEmpty)

            // Memos: on a page, and on the whole book.
            try await client.execute(
                uri: "/api/books/1/memos", method: .post, headers: jsonType,
                body: jsonBody(["page": 1, "text": "read twice"])
            ) { response in
                #expect(response.status == .created && response.object["page"] as? Int == 1)
                id = response.object["id"] as? Int ?? 0
            }
            try await client.execute(
                uri: "/api/books/1/memos", method: .post, headers: jsonType, body: jsonBody(["text": "whole book"])
            ) {
                response in
                #expect(response.status == .created && response.object["page"] is NSNull)
            }
            try await client.execute(
                uri: "/api/memos/\(id)", method: .patch, headers: jsonType, body: jsonBody(["text": "read thrice"])
            ) {
                response in
                #expect(response.object["text"] as? String == "read thrice")
            }
            try await client.execute(uri: "/api/books/1/memos", method: .get) { response in
                #expect(Set(response.array.compactMap { $0["text"] as? String }) == ["read thrice", "whole book"])
            }
            try await client.execute(uri: "/api/memos/\(id)", method: .delete, headers: jsonType) { response in
                #expect(response.status == .ok)
            }
            #expect(try await served.library.memos(of: nil).map(\.text) == ["whole book"])

            // A highlight by its text, then edited and removed.
            try await client.execute(
                uri: "/api/books/1/highlights", method: .post, headers: jsonType,
                body: jsonBody(["page": 1, "text": "quick brown fox", "color": "green"])
            ) { response in
                #expect(response.status == .created, "\(response.object)")
                #expect(response.object["text"] as? String == "quick brown fox")
                #expect(response.object["color"] as? String != "#ffd400")
                id = response.object["id"] as? Int ?? 0
            }
            try await client.execute(
                uri: "/api/highlights/\(id)", method: .patch, headers: jsonType, body: jsonBody(["note": "a pangram"])
            ) { response in
                #expect(response.object["note"] as? String == "a pangram")
            }
            try await client.execute(uri: "/api/books/1/highlights", method: .get) { response in
                #expect(response.array.map { $0["note"] as? String } == ["a pangram"])
            }
            // Exports carry it.
            try await client.execute(uri: "/api/books/1/export?format=markdown", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentDisposition]?.contains(".md") == true)
                #expect(String(buffer: response.body).contains("quick brown fox"))
            }
            try await client.execute(uri: "/api/books/1/export?format=csv", method: .get) { response in
                #expect(String(buffer: response.body).contains("a pangram"))
            }
            try await client.execute(uri: "/api/books/1/export?format=json", method: .get) { response in
                #expect(String(buffer: response.body).contains("\"quick brown fox\""))
            }
            try await client.execute(uri: "/api/books/1/export?format=pdf", method: .get) { response in
                #expect(response.headers[.contentType] == "application/pdf")
                #expect(String(buffer: response.body).hasPrefix("%PDF-"))
            }
            try await client.execute(uri: "/api/highlights/\(id)", method: .delete, headers: jsonType) { response in
                #expect(response.status == .ok)
            }
            #expect(try await served.library.highlights(of: nil).isEmpty)
        }
    }

    /// The pages a browser opens: the library with search hits grouped and marked, a book with
    /// its annotations, and the reader with its controls; user text is escaped.
    @Test func thePagesShowTheLibraryABookAndTheReader() async throws {
        let served = try await ServedLibrary("sample.pdf", "second.pdf")
        let book = try await served.library.resolve("1")
        _ = try await served.library.edit(book, BookChanges(folder: "papers/<b>", addTags: ["to-read"]))
        _ = try await served.library.addMemo(book, page: 2, text: "<script>alert(1)</script>")
        try await served.app().test(.router) { client in
            try await client.execute(uri: "/?q=inverted", method: .get) { response in
                let page = String(buffer: response.body)
                #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
                #expect(page.contains("<mark>inverted</mark>") || page.contains("<mark>Inverted</mark>"), "\(page)")
                #expect(page.contains("href=\"/books/1/pages/2?q=inverted\""))
                #expect(page.contains("papers/&lt;b&gt;") && !page.contains("papers/<b>"))
                #expect(page.contains("<option value=\"to-read\""))
            }
            try await client.execute(uri: "/?tag=to-read", method: .get) { response in
                let page = String(buffer: response.body)
                #expect(page.contains("A Sample Paper") && !page.contains(">Field Notes<"))
            }
            try await client.execute(uri: "/books/1", method: .get) { response in
                let page = String(buffer: response.body)
                #expect(page.contains("href=\"/books/1/pages/2\""))
                #expect(page.contains("&lt;script&gt;") && !page.contains("<script>alert"))
                #expect(page.contains("/api/books/1/export?format=pdf"))
            }
            try await client.execute(uri: "/books/1/pages/2", method: .get) { response in
                let page = String(buffer: response.body)
                for action in ["highlight", "note", "bookmark", "search", "next-page", "prev-page"] {
                    #expect(page.contains("data-action=\"\(action)\""), "\(action)")
                }
                #expect(page.contains("data-page=\"2\""))
            }
            try await client.execute(uri: "/static/reader.js", method: .get) { response in
                #expect(response.headers[.contentType]?.hasPrefix("text/javascript") == true)
                #expect(response.body.readableBytes > 1000)
            }
        }
    }

    /// Reads never write, fetch or reindex: a book whose PDF left the cache is a 404 that says
    /// so (the network stays closed), and nothing about the library changes, not even when a
    /// book was last opened.
    @Test func getsNeverWriteOrFetch() async throws {
        let served = try await ServedLibrary("sample.pdf")
        let book = try await served.library.resolve("1")
        try await served.app().test(.router) { client in
            for uri in [
                "/", "/?q=fox", "/books/1", "/books/1/pages/1", "/api/books", "/api/books/1", "/api/search?q=fox",
                "/api/books/1/pages/1.png", "/api/books/1/pages/1/text", "/api/books/1/highlights",
                "/api/books/1/export?format=json",
            ] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .ok, "\(uri)")
                }
            }
            #expect(try await served.library.resolve("1") == book, "not even openedAt changed")
            served.library.blobs.remove(book.sha256)
            for uri in ["/api/books/1/pages/1.png", "/api/books/1/pages/1/text"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .notFound, "\(uri)")
                    #expect(response.error?.contains("cache") == true, "\(response.object)")
                }
            }
        }
        #expect(try await served.library.resolve("1") == book)
    }
}
