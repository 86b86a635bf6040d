import Foundation
import MarginCore
import Testing

@testable import MarginKit

@Suite struct ParsingTests {
    @Test(arguments: [
        ("500MB", Int64(500_000_000)), ("1GiB", Int64(1 << 30)), ("2048", Int64(2048)), ("1.5k", Int64(1536)),
        ("10 MiB", Int64(10 << 20)),
    ])
    func byteSizes(text: String, bytes: Int64) {
        #expect(parseByteSize(text) == bytes)
    }

    @Test(arguments: ["", "MB", "-5MB", "12 parsecs", "0"])
    func badByteSizes(text: String) {
        #expect(parseByteSize(text) == nil)
    }

    @Test func inputKinds() throws {
        #expect(try InputKind("https://example.org/a%20b.pdf") == .remote(url: "https://example.org/a%20b.pdf"))
        #expect(try InputKind("file:///tmp/x.pdf") == .local(path: "/tmp/x.pdf"))
        #expect(try InputKind("/tmp/../tmp/y.pdf") == .local(path: "/tmp/y.pdf"))
        #expect(throws: MarginError.self) { try InputKind("ftp://host/x.pdf") }
        #expect(throws: MarginError.self) { try InputKind("http://") }
        #expect(try InputKind("https://example.org/papers/a%20b.pdf").fallbackTitle == "a b")
        #expect(try InputKind("https://example.org/").fallbackTitle == "example.org")
    }

    @Test func libraryPaths() {
        #expect(
            LibraryPaths.resolve(library: "/lib", environment: ["MARGIN_HOME": "/home"]).database
                == "/lib/library.sqlite")
        #expect(LibraryPaths.resolve(library: nil, environment: ["MARGIN_HOME": "/home"]).cache == "/home/cache")
        let xdg = LibraryPaths.resolve(
            library: nil, environment: ["HOME": "/u", "XDG_DATA_HOME": "/d", "XDG_CACHE_HOME": "/c"])
        #expect(
            xdg
                == LibraryPaths(
                    database: "/d/margin/library.sqlite", cache: "/c/margin", keyFile: "/u/.config/margin/key"))
        let plain = LibraryPaths.resolve(library: nil, environment: ["HOME": "/u"])
        #expect(
            plain
                == LibraryPaths(
                    database: "/u/.local/share/margin/library.sqlite", cache: "/u/.cache/margin",
                    keyFile: "/u/.config/margin/key"))
    }
}
