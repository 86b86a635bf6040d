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

    @Test func libraryPaths() throws {
        #expect(
            try LibraryPaths.resolve(library: "/lib", environment: ["MARGIN_HOME": "/home"]).database
                == "/lib/library.sqlite")
        #expect(try LibraryPaths.resolve(library: nil, environment: ["MARGIN_HOME": "/home"]).cache == "/home/cache")
        let xdg = try LibraryPaths.resolve(
            library: nil, environment: ["HOME": "/u", "XDG_DATA_HOME": "/d", "XDG_CACHE_HOME": "/c"])
        #expect(
            xdg
                == LibraryPaths(
                    database: "/d/margin/library.sqlite", cache: "/c/margin", keyFile: "/u/.config/margin/key"))
        let plain = try LibraryPaths.resolve(library: nil, environment: ["HOME": "/u"])
        #expect(
            plain
                == LibraryPaths(
                    database: "/u/.local/share/margin/library.sqlite", cache: "/u/.cache/margin",
                    keyFile: "/u/.config/margin/key"))
        // Parsed once: a folder, sqlite://FOLDER, or a URL whose scheme a backend registered.
        let team = try LibraryPaths.resolve(
            library: "postgres://ann@db.example/lab", environment: ["HOME": "/u"], schemes: ["postgres"])
        #expect(team.location == .server(scheme: "postgres", url: "postgres://ann@db.example/lab"))
        #expect(team.cache == "/u/.cache/margin/team/db.example-5432-_lab")
        #expect(
            try LibraryPaths.resolve(library: "sqlite:///srv/lib", environment: [:]).database
                == "/srv/lib/library.sqlite")
        #expect(try LibraryPaths.resolve(library: "/srv/lib", environment: [:]).location == .folder("/srv/lib"))
        #expect(throws: MarginError.self) {
            try LibraryPaths.resolve(library: "mysql://db/lab", environment: [:], schemes: ["postgres"])
        }
        #expect(throws: MarginError.self) { try LibraryPaths.resolve(library: "postgres://db/lab", environment: [:]) }
        #expect(LibraryLocation.serverScheme(of: "PostgreSQL://x") == "postgresql")
        #expect(LibraryLocation.serverScheme(of: "sqlite:///x") == nil && LibraryLocation.serverScheme(of: "/x") == nil)
    }

    /// A location's URL scheme is read as the regular expression RFC 3986 gives reads it.
    @Test(arguments: [
        "postgres://h/db", "PostgreSQL://x", "sqlite:///x", "file:///x", "/x", "x", "", "://x", "1a://x", "a1+.-://x",
        "a_b://x", "a:b://x", "a b://x", "/home/x://y", "é://x", "postgres:/x", "postgres//x", "ab://", "a://b://c",
    ])
    func schemesAreReadAsTheirPattern(text: String) {
        let pattern = text.range(of: #"^[A-Za-z][A-Za-z0-9+.-]*://"#, options: .regularExpression)
        #expect(LibraryLocation.schemeRange(text) == pattern)
    }

    /// Library folders are made absolute as Foundation's URL does it, lexically.
    @Test(arguments: [
        "/tmp/lib", "/tmp/lib/", "/tmp//lib", "/tmp/./lib", "/tmp/a/../lib", "/tmp/a/b/../../lib", "/", "/..",
        "/../tmp", "lib", "./lib", "lib/../other", "../lib", "a/./b/", "/tmp/a b/ü", ".",
    ])
    func absolutePaths(path: String) {
        #expect(absolutePath(path) == URL(fileURLWithPath: path).standardizedFileURL.path)
    }

    /// Trimming white space agrees with Foundation's `.whitespacesAndNewlines`, Unicode's spaces
    /// included.
    @Test(arguments: [
        "", " ", "word", "  two words \t", "\n\r\nline\n", "\u{A0}nbsp\u{3000}", "\u{2028}x\u{85}", "a\u{200B}",
        "\u{1680}\u{2003}é\u{202F}", "\u{0B}\u{0C}tabs\u{09}",
    ])
    func trimming(text: String) {
        #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Every scalar of the Basic Multilingual Plane is white space to both or to neither.
    @Test func whiteSpaceIsFoundations() {
        let differing = (0...0xFFFF).compactMap(Unicode.Scalar.init).filter { scalar in
            let text = String(scalar)
            return text.trimmingWhitespace().isEmpty != text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        }
        #expect(differing.map { String($0.value, radix: 16) } == [])
    }

    /// Replacing agrees with Foundation's, on texts made of pieces that overlap and repeat.
    @Test func replacing() {
        let pieces = ["a", "aa", "\u{1}", "é", "e\u{301}", "ü", "→", " ", "ab", "b", "🙂", "\n"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement()! }.joined()
            let target = (0..<Int.random(in: 1...2, using: &generator)).map { _ in pieces.randomElement()! }.joined()
            let replacement = ["", "X", "\u{1B}[1m", "aa"].randomElement()!
            // Byte for byte: String's == holds "é" and "e\u{301}" equal.
            #expect(
                Array(text.replacingAll(target, with: replacement).utf8)
                    == Array(text.replacingOccurrences(of: target, with: replacement, options: .literal).utf8),
                "\(text.debugDescription) \(target.debugDescription)")
        }
        #expect("aaa".replacingAll("aa", with: "b") == "ba")
        #expect("\u{1}x\u{2}".replacingAll("\u{1}", with: "") == "x\u{2}")
    }

    /// The environment and the executable's path as Foundation reads them.
    @Test func environmentAndExecutable() throws {
        #expect(environmentVariables == ProcessInfo.processInfo.environment)
        #expect(!environmentVariables.isEmpty)
        #expect(executablePath() == (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")))
    }

    @Test func queries() {
        #expect(
            parseQuery("  bayesian   \"probability  distribution\" x\u{A0}") == [
                "bayesian", "probability  distribution", "x",
            ])
        #expect(parseQuery("\" \u{3000} \" ") == [])
        #expect(parseQuery("\"open phrase") == ["open phrase"])
    }
}

/// Which group of a tier's words stands for a term (every word of it holds the term).
@Suite struct WordTierImplicationTests {
    @Test func aGroupImpliesATermEachOfItsWordsHolds() {
        let tier = WordTier(holding: [["studies", "study"], ["the"], []], notHolding: [["stud"]])
        #expect(tier.groupImplying("stud") == 0)
        #expect(tier.groupImplying("study") == nil, "not in \"studies\"")
        #expect(tier.groupImplying("the") == 1 && tier.groupImplying("he") == 1)
        #expect(tier.groupImplying("") == nil && tier.groupImplying("x") == nil)
        #expect(WordTier.any.groupImplying("the") == nil && WordTier.lacking(["the"]).groupImplying("the") == nil)
        // By bytes: a decomposed é is not the composed one.
        #expect(WordTier.holding(["café"]).groupImplying("cafe\u{301}") == nil)
        #expect(WordTier.holding(["häuser"]).groupImplying("äuse") == 0)
    }
}
