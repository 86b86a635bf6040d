import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MarginCore
import MarginKit
import NIOCore
import Testing

/// Bad requests get one clear JSON error with a fitting status, and change nothing.
@Suite struct ReaderBadInputTests {
    @Test func eachBadRequestIsAClearErrorAndWritesNothing() async throws {
        let served = try await ServedLibrary("sample.pdf")
        let before = try await served.snapshot()
        let json: HTTPFields = [.contentType: "application/json"]
        let cases: [(String, HTTPRequest.Method, ByteBuffer?, HTTPResponse.Status, String)] = [
            ("/api/books/1/pages/0.png", .get, nil, .notFound, "page 0"),
            ("/api/books/1/pages/4.png", .get, nil, .notFound, "page 4"),
            ("/api/books/1/pages/9/text", .get, nil, .notFound, "page 9"),
            ("/api/books/1/pages/x.png", .get, nil, .badRequest, "not a page number"),
            ("/api/books/1/pages/1.png?dpi=abc", .get, nil, .badRequest, "dpi"),
            ("/api/books/1/pages/1.png?dpi=0.0000001", .get, nil, .badRequest, "dpi must be at least 1"),
            ("/api/books/1/pages/1.png?dpi=-3", .get, nil, .badRequest, "dpi must be at least 1"),
            ("/api/books/1/memos", .post, jsonBody(["text": "a\u{0}b"]), .badRequest, "NUL"),
            ("/api/books/1/bookmarks", .post, jsonBody(["page": 1, "label": "a\u{0}b"]), .badRequest, "NUL"),
            (
                "/api/books/1/highlights", .post, jsonBody(["page": 1, "text": "quick", "note": "a\u{0}b"]),
                .badRequest, "NUL"
            ),
            ("/api/search?q=" + Array(repeating: "w", count: 1_001).joined(), .get, nil, .badRequest, "at most 1000"),
            ("/api/books/42", .get, nil, .notFound, "42"),
            ("/api/books/42/highlights", .post, jsonBody(["page": 1, "start": 0, "end": 3]), .notFound, "42"),
            ("/api/books/1/highlights", .post, ByteBuffer(string: "{not json"), .badRequest, "malformed JSON"),
            ("/api/books/1/highlights", .post, jsonBody(["start": 0, "end": 3]), .badRequest, "'page' is missing"),
            (
                "/api/books/1/highlights", .post, jsonBody(["page": 1, "start": 5, "end": 99_999]), .badRequest,
                "outside page 1"
            ),
            ("/api/books/1/highlights", .post, jsonBody(["page": 1, "start": 7, "end": 3]), .badRequest, "outside"),
            ("/api/books/1/highlights", .post, jsonBody(["page": 4, "start": 0, "end": 3]), .notFound, "page 4"),
            (
                "/api/books/1/highlights", .post, jsonBody(["page": 1, "color": "plaid", "start": 0, "end": 3]),
                .badRequest, "plaid"
            ),
            ("/api/books/1/bookmarks", .post, jsonBody(["page": 0]), .notFound, "page 0"),
            ("/api/books/1/memos", .post, jsonBody(["page": 1, "text": " "]), .badRequest, "empty"),
            ("/api/highlights/7", .delete, nil, .notFound, "highlight with id 7"),
            ("/api/memos/7", .patch, jsonBody(["text": "x"]), .notFound, "memo with id 7"),
            ("/api/search?q=", .get, nil, .badRequest, "what to search"),
            ("/api/search?q=a%28&regex=1", .get, nil, .badRequest, "regular expression"),
            ("/api/books?sort=colour", .get, nil, .badRequest, "sort must be"),
            ("/api/books?limit=-1", .get, nil, .badRequest, "limit"),
            ("/api/books/1/export?format=docx", .get, nil, .badRequest, "format must be"),
            ("/api/nothing-here", .get, nil, .notFound, "no such"),
            ("/books/1/pages/5", .get, nil, .notFound, "page 5"),
        ]
        try await served.app().test(.router) { client in
            for (uri, method, body, status, words) in cases {
                try await client.execute(uri: uri, method: method, headers: method == .get ? [:] : json, body: body) {
                    response in
                    #expect(response.status == status, "\(method) \(uri): \(String(buffer: response.body))")
                    // The API answers JSON; a page a person reads answers a page that says the same.
                    let api = uri.hasPrefix("/api/")
                    let message = api ? response.error ?? "" : String(buffer: response.body)
                    #expect(!message.isEmpty && message.contains(words), "\(method) \(uri): \(message)")
                    #expect(response.headers[.contentType]?.hasPrefix(api ? "application/json" : "text/html") == true)
                }
            }
            // A body over the upload limit: 413.
            let huge = ByteBuffer(repeating: UInt8(ascii: " "), count: 3 << 20)
            try await client.execute(uri: "/api/books/1/memos", method: .post, headers: json, body: huge) { response in
                #expect(response.status == .contentTooLarge, "\(String(buffer: response.body))")
            }
        }
        #expect(try await served.snapshot() == before, "nothing written")
    }

    @Test func withATokenEveryRequestWithoutItIs401() async throws {
        let served = try await ServedLibrary("sample.pdf")
        let before = try await served.snapshot()
        try await served.app(token: "s3cret").test(.router) { client in
            for (uri, method) in [
                ("/", HTTPRequest.Method.get), ("/api/books", .get), ("/books/1/pages/1", .get),
                ("/api/books/1/bookmarks", .post),
            ] {
                try await client.execute(uri: uri, method: method, body: jsonBody(["page": 1])) { response in
                    #expect(response.status == .unauthorized, "\(uri)")
                    #expect((response.error ?? String(buffer: response.body)).contains("token"))
                }
                try await client.execute(
                    uri: uri, method: method, headers: [.authorization: "Bearer wrong"], body: jsonBody(["page": 1])
                ) { response in
                    #expect(response.status == .unauthorized, "\(uri) with a wrong token")
                }
            }
            try await client.execute(uri: "/login?token=nope", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.setCookie] == nil)
            }
            #expect(try await served.snapshot() == before, "nothing written without the token")
            try await client.execute(uri: "/api/books", method: .get, headers: [.authorization: "Bearer s3cret"]) {
                response in
                #expect(response.status == .ok)
                #expect(response.array.count == 1)
            }
            var cookie = ""
            try await client.execute(uri: "/login?token=s3cret", method: .get) { response in
                #expect(response.status == .seeOther)
                cookie = String((response.headers[.setCookie] ?? "").split(separator: ";")[0])
                #expect(cookie == "margin_token=s3cret")
            }
            try await client.execute(uri: "/books/1/pages/1", method: .get, headers: [.cookie: cookie]) { response in
                #expect(response.status == .ok)
            }
        }
    }
}
