import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MarginCore
import MarginKit
import MarginServe
import NIOCore
import Testing

/// What any web page the user visits could send to the reader: writes from other sites, other
/// `Host` names (DNS rebinding), preflights. Each is refused and changes nothing.
@Suite struct RequestGuardTests {
    nonisolated(unsafe) static let writes: [(String, HTTPRequest.Method, [String: Any])] = [
        ("/api/books/1/memos", .post, ["text": "forged"]),
        ("/api/books/1/bookmarks", .post, ["page": 2, "label": "forged"]),
        ("/api/books/1/highlights", .post, ["page": 2, "text": "inverted index"]),
        ("/api/highlights/1", .patch, ["note": "forged"]),
        ("/api/bookmarks/1", .patch, ["label": "forged"]),
        ("/api/memos/1", .patch, ["text": "forged"]),
        ("/api/highlights/1", .delete, [:]),
        ("/api/bookmarks/1", .delete, [:]),
        ("/api/memos/1", .delete, [:]),
    ]

    /// A library with one of each annotation (id 1) to be forged or removed.
    static func annotated() async throws -> ServedLibrary {
        let served = try await ServedLibrary("sample.pdf")
        let book = try await served.library.resolve("1")
        var request = HighlightRequest(text: "quick brown fox")
        request.page = 1
        _ = try await served.library.addHighlights(book, request)
        _ = try await served.library.addBookmark(book, page: 1, label: "mine", shared: false)
        _ = try await served.library.addMemo(book, page: 1, text: "mine", shared: false)
        return served
    }

    @Test func writesFromOtherSitesOrNotInJSONAre403AndChangeNothing() async throws {
        let served = try await Self.annotated()
        let before = try await served.snapshot()
        let attacks: [(String, HTTPFields)] = [
            // What an auto-submitted <form> can send, with no Origin (an old browser) or its site's.
            ("text/plain", [.contentType: "text/plain"]),
            ("a form", [.contentType: "application/x-www-form-urlencoded", .origin: "http://attacker.test"]),
            ("multipart", [.contentType: "multipart/form-data; boundary=x"]),
            ("no type", [:]),
            // JSON from another origin, or one a browser marks as another site's.
            ("other origin", [.contentType: "application/json", .origin: "http://attacker.test"]),
            ("null origin", [.contentType: "application/json", .origin: "null"]),
            ("another port", [.contentType: "application/json", .origin: "http://localhost:1"]),
            (
                "cross-site fetch",
                [.contentType: "application/json", HTTPField.Name("Sec-Fetch-Site")!: "cross-site"]
            ),
            ("same-site", [.contentType: "application/json", HTTPField.Name("Sec-Fetch-Site")!: "same-site"]),
        ]
        try await served.app().test(.router) { client in
            for (name, headers) in attacks {
                for (uri, method, body) in Self.writes {
                    try await client.execute(uri: uri, method: method, headers: headers, body: jsonBody(body)) {
                        response in
                        #expect(response.status == .forbidden, "\(name): \(method) \(uri) → \(response.status)")
                        #expect(response.error?.isEmpty == false)
                    }
                }
            }
            // A preflight grants no other origin anything.
            try await client.execute(
                uri: "/api/books/1/memos", method: .options,
                headers: [
                    .origin: "http://attacker.test", HTTPField.Name("Access-Control-Request-Method")!: "POST",
                ]
            ) { response in
                #expect(response.status == .noContent)
                #expect(!response.headers.contains { $0.name.canonicalName.hasPrefix("access-control-") })
            }
        }
        #expect(try await served.snapshot() == before, "nothing written")
        // The reader's own writes: JSON, from its own origin (or from a script without one).
        try await served.app().test(.router) { client in
            let own: HTTPFields = [.contentType: "application/json; charset=utf-8", .origin: "http://localhost"]
            try await client.execute(
                uri: "/api/books/1/memos", method: .post, headers: own, body: jsonBody(["text": "from the reader"])
            ) { response in
                #expect(response.status == .created, "\(response.object)")
            }
            try await client.execute(
                uri: "/api/memos/1", method: .delete,
                headers: [.contentType: "application/json", HTTPField.Name("Sec-Fetch-Site")!: "same-origin"]
            ) { response in
                #expect(response.status == .ok, "\(response.object)")
            }
        }
    }

    @Test func onlyTheNamesTheServerIsReachedByAreServed() async throws {
        let served = try await Self.annotated()
        let before = try await served.snapshot()
        let server = ReaderServer(
            library: served.library, settings: ServeSettings(allowedHosts: ["reader.lab.example", "proxy.test:9443"]))
        server.names.bound(to: 8484)
        let app = Application(router: server.router())
        try await app.test(.router) { client in
            for (host, status) in [
                ("127.0.0.1:8484", HTTPResponse.Status.ok), ("localhost:8484", .ok), ("[::1]:8484", .ok),
                ("LOCALHOST:8484", .ok), ("reader.lab.example:8484", .ok), ("proxy.test:9443", .ok),
                ("rebind.attacker.test:8484", .misdirectedRequest), ("127.0.0.1:8485", .misdirectedRequest),
                ("localhost", .misdirectedRequest), ("proxy.test:8484", .misdirectedRequest),
                ("127.0.0.1.attacker.test:8484", .misdirectedRequest), ("", .misdirectedRequest),
            ] {
                for uri in ["/api/books", "/", "/api/books/1/export?format=json"] {
                    try await client.execute(uri: uri, method: .get, headers: [HTTPField.Name("Host")!: host]) {
                        response in
                        #expect(response.status == status, "Host: \(host) \(uri) → \(response.status)")
                    }
                }
                try await client.execute(
                    uri: "/api/highlights/1", method: .delete,
                    headers: [HTTPField.Name("Host")!: host, .contentType: "application/json"]
                ) { response in
                    if status != .ok { #expect(response.status == .misdirectedRequest, "DELETE Host: \(host)") }
                }
                if status == .ok { break }
            }
        }
        _ = before
    }

    @Test func everyResponseCarriesTheHeadersOfDefence() async throws {
        let served = try await ServedLibrary("sample.pdf")
        try await served.app(token: "t").test(.router) { client in
            for (uri, headers) in [
                ("/", [HTTPField.Name.authorization: "Bearer t"]), ("/api/books", [.authorization: "bearer t"]),
                ("/nope", [.authorization: "BEARER t"]), ("/api/books", [:]), ("/static/reader.js", [:]),
                ("/api/books/1/pages/1.png?dpi=20", [.authorization: "Bearer t"]),
            ] as [(String, HTTPFields)] {
                try await client.execute(uri: uri, method: .get, headers: headers) { response in
                    let policy = response.headers[.contentSecurityPolicy] ?? ""
                    #expect(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"), "\(uri)")
                    #expect(!policy.contains("unsafe-inline"))
                    #expect(response.headers[.xContentTypeOptions] == "nosniff")
                    #expect(response.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
                }
            }
            // The scheme of Authorization is case-insensitive (RFC 9110).
            try await client.execute(uri: "/api/books", method: .get, headers: [.authorization: "bearer t"]) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/api/books", method: .get, headers: [.authorization: "Basic t"]) {
                #expect($0.status == .unauthorized)
            }
        }
    }

    /// The pages hold no inline script or style (the policy would block them).
    @Test func thePagesNeedNoInlineScriptOrStyle() async throws {
        let served = try await Self.annotated()
        try await served.app().test(.router) { client in
            for uri in ["/", "/?q=index", "/books/1", "/books/1/pages/2"] {
                try await client.execute(uri: uri, method: .get) { response in
                    let page = String(buffer: response.body)
                    #expect(response.status == .ok)
                    #expect(!page.contains(" style="), "\(uri) has an inline style")
                    #expect(!page.contains("<script>") && !page.contains(" on"), "\(uri) has an inline script")
                }
            }
        }
    }

    @Test func loopbackIsDecidedByTheAddressesANameResolvesTo() throws {
        #expect(isLoopbackOnly([[127, 0, 0, 1]]))
        #expect(isLoopbackOnly([[127, 1, 2, 3]]))
        #expect(isLoopbackOnly([Array(repeating: 0, count: 15) + [1]]))
        #expect(isLoopbackOnly([Array(repeating: 0, count: 10) + [0xff, 0xff, 127, 0, 0, 1]]))
        #expect(!isLoopbackOnly([[127, 0, 0, 1], [192, 168, 1, 2]]), "one non-loopback address is enough")
        #expect(!isLoopbackOnly([[10, 0, 0, 1]]))
        #expect(!isLoopbackOnly([Array(repeating: 0, count: 16)]), ":: is every address")
        #expect(!isLoopbackOnly([[0, 0, 0, 0]]))
        #expect(!isLoopbackOnly([]))
        #expect(try resolvesToLoopbackOnly("127.0.0.1"))
        #expect(try resolvesToLoopbackOnly("::1"))
        #expect(try resolvesToLoopbackOnly("localhost"))
        #expect(try !resolvesToLoopbackOnly("0.0.0.0"))
        #expect(try !resolvesToLoopbackOnly("10.1.2.3"))
        #expect(throws: MarginError.self) { try resolvesToLoopbackOnly("127.lan.invalid") }
    }
}

/// HTTP as browsers and clients speak it: form-encoded queries, HEAD, error pages for people.
@Suite struct ReaderHTTPTests {
    @Test func aPlusInAQueryIsASpaceAsHTMLFormsSendIt() async throws {
        let served = try await ServedLibrary("sample.pdf", "second.pdf")
        var changes = BookChanges()
        changes.addTags = ["field work"]
        _ = try await served.library.edit(try await served.library.resolve("2"), changes)
        try await served.app().test(.router) { client in
            try await client.execute(uri: "/api/search?q=inverted+index", method: .get) { response in
                #expect(response.array.map { $0["page"] as? Int } == [2], "\(response.array)")
            }
            try await client.execute(uri: "/api/search?q=%2B", method: .get) { response in
                #expect(response.status == .badRequest || response.status == .ok, "a literal plus stays a plus")
            }
            try await client.execute(uri: "/?q=inverted+index", method: .get) { response in
                #expect(String(buffer: response.body).contains("Pages matching “inverted index”"))
                #expect(String(buffer: response.body).contains("/books/1/pages/2"))
            }
            // Every term of the query is marked in the snippets, in any case, not only the first.
            try await client.execute(uri: "/?q=INDEX+maps+pages", method: .get) { response in
                let page = String(buffer: response.body)
                for word in ["index", "maps", "pages"] {
                    #expect(page.contains("<mark>\(word)</mark>"), "\(word): \(page)")
                }
            }
            try await client.execute(uri: "/api/books?tag=field+work", method: .get) { response in
                #expect(response.array.map { $0["id"] as? Int } == [2], "\(response.array)")
            }
            try await client.execute(uri: "/?tag=field+work", method: .get) { response in
                let page = String(buffer: response.body)
                #expect(page.contains("Field Notes") && !page.contains(">A Sample Paper<"))
            }
        }
    }

    @Test func headIsAnsweredWhereverGetIs() async throws {
        let served = try await ServedLibrary("sample.pdf")
        try await served.app().test(.router) { client in
            for uri in [
                "/", "/books/1", "/books/1/pages/2", "/api/books", "/api/books/1", "/api/books/1/pages/1.png?dpi=20",
                "/static/reader.js", "/api/books/1/export?format=markdown",
            ] {
                var length = 0
                try await client.execute(uri: uri, method: .get) { length = $0.body.readableBytes }
                try await client.execute(uri: uri, method: .head) { response in
                    #expect(response.status == .ok, "HEAD \(uri)")
                    #expect(response.body.readableBytes == 0)
                    #expect(response.headers[.contentLength] == String(length), "HEAD \(uri)")
                }
            }
            try await client.execute(uri: "/books/99", method: .head) { #expect($0.status == .notFound) }
        }
    }

    @Test func htmlRoutesAnswerErrorsAsPagesAndTheAPIAsJSON() async throws {
        let served = try await ServedLibrary("sample.pdf")
        try await served.app().test(.router) { client in
            for (uri, status) in [
                ("/books/999", HTTPResponse.Status.notFound), ("/books/1/pages/99", .notFound), ("/nope", .notFound),
                ("/books/x/pages/y", .notFound),
            ] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == status, "\(uri)")
                    #expect(response.headers[.contentType]?.hasPrefix("text/html") == true, "\(uri)")
                    let page = String(buffer: response.body)
                    #expect(page.contains("<!doctype html>") && page.contains("Back to the library"), "\(uri)")
                }
            }
            try await client.execute(uri: "/api/books/999", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            }
        }
    }
}

@Suite struct SelectionJoinTests {
    /// A selection across a hyphenated line end is stored as the CLI stores the same words.
    @Test func aSelectionAcrossAHyphenatedLineEndIsJoinedAsTheCLIJoinsIt() async throws {
        let served = try await ServedLibrary("prose.pdf")
        try await served.app().test(.router) { client in
            var text = ""
            try await client.execute(uri: "/api/books/1/pages/1/text", method: .get) { response in
                text = response.object["text"] as? String ?? ""
            }
            let scalars = Array(text.unicodeScalars)
            let start = try #require(
                (0..<scalars.count - 4).first { String(String.UnicodeScalarView(scalars[$0..<$0 + 4])) == "com-" })
            let end =
                try #require(
                    (start..<scalars.count - 4).first {
                        String(String.UnicodeScalarView(scalars[$0..<$0 + 4])) == "uter"
                    }) + 4
            try await client.execute(
                uri: "/api/books/1/highlights", method: .post, headers: jsonType,
                body: jsonBody(["page": 1, "start": start, "end": end])
            ) { response in
                #expect(response.status == .created, "\(response.object)")
                #expect(response.object["text"] as? String == "computer", "\(response.object)")
            }
        }
        var request = HighlightRequest(text: "computer")
        request.page = 1
        let other = try await ServedLibrary("prose.pdf")
        let cli = try await other.library.addHighlights(try await other.library.resolve("1"), request)
        #expect(cli.first?.text == "computer")
    }
}
