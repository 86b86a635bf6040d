import Foundation
import TestSupport
import Testing

/// A folder made read-only by a read-only bind mount (root can write anywhere else). Tests that
/// need one are skipped where it can't be made.
final class ReadOnlyMount {
    let path: String

    init?(_ path: String) {
        self.path = path
        guard SmallDisk.shell("mount --bind '\(path)' '\(path)' && mount -o remount,ro,bind '\(path)'") == 0 else {
            SmallDisk.shell("umount '\(path)'")
            return nil
        }
    }

    deinit { SmallDisk.shell("umount -l '\(path)'") }

    static let available: Bool = {
        guard getuid() == 0 else { return false }
        let folder = TemporaryFolder()
        return ReadOnlyMount(folder.path) != nil
    }()
}

/// Defects a user meets at the terminal: reading where nothing can be written, what is
/// printed, passwords and credentials, messages and names. Each test failed before its fix.
@Suite struct UserFacingDefectTests {
    /// Read commands work on a read-only library; writes fail with one clear line.
    @Test(.enabled(if: ReadOnlyMount.available, "needs root to make a read-only bind mount"))
    func aReadOnlyLibraryCanBeRead() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("highlight", "add", "sample", "--text", "fox", "--occurrence", "1")
        let before = try box.snapshot()
        let mount = try #require(ReadOnlyMount(box.home))
        let elsewhere = TemporaryFolder()
        for arguments in [
            ["list"], ["show", "sample"], ["text", "sample", "--pages", "1"], ["search", "fox"],
            ["annotations", "sample"],
            ["highlight", "list"], ["export", "sample", "--format", "json"], ["db", "status"], ["recent"],
            ["render", "sample", "--page", "1", "-o", elsewhere.path + "/page.png"],
        ] {
            try box.ok(arguments)
        }
        let write = try box.fails("memo", "add", "sample", "a memo")
        #expect(write.stderr.contains("read-only"), "\(write)")
        #expect(!write.stderr.contains("SQLite error"))
        _ = mount
        #expect(try box.snapshot() == before)
    }

    /// `search` never downloads and never fails for a book it can't index: it says so.
    @Test func searchSkipsWhatItCannotIndex() throws {
        let server = try TestHTTPServer(routes: [:])
        defer { server.shutdown() }
        let box = Sandbox()
        try FileManager.default.createDirectory(atPath: box.home, withIntermediateDirectories: true)
        let database = box.home + "/library.sqlite"
        try FileManager.default.copyItem(atPath: Fixtures.root + "/fixtures/db/v1.sqlite", toPath: database)
        // An old library (nothing indexed) whose books come from a URL and aren't cached.
        SmallDisk.shell("sqlite3 '\(database)' \"UPDATE source SET url = '\(server.url("/gone.pdf"))'\"")
        try box.ok("add", Fixtures.pdf("mixed.pdf"))
        let result = try box.ok("search", "fox")
        #expect(result.stdout.contains("Mixed Bag"))
        #expect(result.stderr.contains("3 books not searched"), "\(result)")
        #expect(result.stderr.contains("margin reindex"))
        #expect(server.allRequests.isEmpty, "search went to the network: \(server.allRequests.map(\.path))")
        // Reading commands never fetch: a missing PDF is named, with the command that fetches it.
        let before = try box.snapshot()
        for arguments in [
            ["render", "1", "--page", "1", "-o", box.folder.path + "/p.png"], ["text", "1"],
            ["export", "1", "--format", "pdf", "-o", box.folder.path + "/a.pdf"],
        ] {
            let failed = try box.fails(arguments)
            #expect(
                failed.stderr.contains("not in the cache") && failed.stderr.contains("'margin fetch 1'"),
                "\(arguments): \(failed)")
        }
        #expect(server.allRequests.isEmpty, "a reading command went to the network: \(server.allRequests.map(\.path))")
        #expect(try box.snapshot() == before)
    }

    /// Titles from PDFs are printed without their control characters (the JSON keeps them,
    /// escaped); a word processor's title prefix is dropped.
    @Test func titlesArePrintedSafely() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("hostile-title.pdf"))
        try box.ok("add", Fixtures.pdf("word-export.pdf"))
        for arguments in [["list"], ["show", "1"], ["search", "untitled"], ["recent"]] {
            let result = try box.ok(arguments)
            for control in ["\u{1B}", "\u{7}", "\r"] {
                #expect(
                    !result.stdout.contains(control),
                    "\(arguments) printed a control character: \(result.stdout.debugDescription)")
            }
        }
        let json = try #require(try box.books().first)
        // A title is one line: its control characters became spaces on the way in.
        #expect(json.string("title") == "Evil ]0;pwned [2J Title", "\(json)")
        #expect(try box.books().last?.string("title") == "thesis draft")
    }

    /// `list` prints each book on one line (a title's line breaks and tabs become spaces) with
    /// the minute it was added, in the local time zone.
    @Test func listPrintsOneLineABookWithItsLocalAddedTime() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("word-export.pdf"))
        try box.ok("edit", "1", "--title", "Two\nlines\tand a tab", "--author", "A. Writer")
        let zone = "Asia/Kolkata"  // UTC+05:30: minutes move too
        let table = try box.margin.run(["list"], environment: ["TZ": zone])
        #expect(table.status == 0, "\(table)")
        let added = try #require(try box.books().first?.string("addedAt"))
        let stored = ISO8601DateFormatter()
        stored.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = try #require(stored.date(from: added) ?? ISO8601DateFormatter().date(from: added), "\(added)")
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = TimeZone(identifier: zone)
        local.dateFormat = "yyyy-MM-dd HH:mm"
        let lines = table.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(table)")
        let row = String(lines.last ?? "")
        #expect(row.contains("Two lines and a tab"), "\(row)")
        #expect(row.hasSuffix(local.string(from: date)), "\(row) (added \(added))")
    }

    /// Passwords: never on the command line (asked for or read from stdin), not stored in the
    /// clear, and settable again for a book restored from a backup.
    @Test func passwordsStaySecret() throws {
        let box = Sandbox()
        let added = try box.margin.run(["add", Fixtures.pdf("encrypted.pdf"), "--password", "-"], stdin: "secret\n")
        #expect(added.status == 0, "\(added)")
        let bytes = Data(Fixtures.bytes(box.home + "/library.sqlite"))
        #expect(bytes.range(of: Data("secret".utf8)) == nil, "the password is not in the library file")
        try box.ok("render", "field", "--page", "1", "-o", box.folder.path + "/page.png")
        // Restored elsewhere: the backup carries no password; edit --password gives it back.
        let backup = box.folder.path + "/backup.json"
        try box.ok("export", "--all", "--format", "json", "-o", backup)
        #expect(!(try String(contentsOfFile: backup, encoding: .utf8)).contains("secret"))
        let restored = Sandbox()
        try restored.ok("add", Fixtures.pdf("sample.pdf"))
        try restored.ok("import", backup)
        try FileManager.default.createDirectory(
            atPath: restored.home + "/cache/pdfs/src", withIntermediateDirectories: true)
        try restored.ok("fetch", "field")
        let refused = try restored.fails("render", "field", "--page", "1", "-o", restored.folder.path + "/page.png")
        #expect(refused.stderr.contains("password"), "\(refused)")
        let wrong = try restored.margin.run(["edit", "field", "--password", "-"], stdin: "nope\n")
        #expect(wrong.status != 0 && wrong.stderr.contains("does not open"), "\(wrong)")
        let right = try restored.margin.run(["edit", "field", "--password", "-"], stdin: "secret\n")
        #expect(right.status == 0, "\(right)")
        try restored.ok("render", "field", "--page", "1", "-o", restored.folder.path + "/page.png")
        // An owner password alone: it opens, and the book says it is encrypted.
        let owner = box.folder.path + "/owner.pdf"
        #expect(SmallDisk.shell("qpdf --encrypt '' owner 256 -- '\(Fixtures.pdf("second.pdf"))' '\(owner)'") == 0)
        let ownerOnly = Sandbox()
        try ownerOnly.ok("add", owner)
        #expect(try ownerOnly.books().first?["encrypted"] as? Bool == true)
        try ownerOnly.ok("render", "1", "--page", "1", "-o", ownerOnly.folder.path + "/page.png")
    }

    /// User names, passwords and tokens in a source URL never reach output or exports; the
    /// library keeps the URL whole to fetch the PDF again.
    @Test func credentialsInURLsAreRedacted() throws {
        let server = try TestHTTPServer(routes: ["/paper.pdf": .file(Fixtures.pdf("sample.pdf"))])
        defer { server.shutdown() }
        let url =
            server.url("/paper.pdf").replacingOccurrences(of: "http://", with: "http://reader:hunter2@")
            + "?token=abc123&page=1"
        let box = Sandbox()
        let added = try box.ok("add", url, "--json")
        let outputs = [
            added.stdout, try box.ok("list", "--json").stdout, try box.ok("show", "1").stdout,
            try box.ok("export", "1", "--format", "json").stdout,
            try box.ok("export", "1", "--format", "markdown").stdout,
            try box.ok("export", "1", "--format", "csv").stdout, try box.ok("book", "versions", "1", "--json").stdout,
        ]
        for output in outputs {
            #expect(!output.contains("hunter2") && !output.contains("abc123"), "\(output)")
        }
        #expect(
            try box.books().first?["sources"] as? [String] == [
                server.url("/paper.pdf").replacingOccurrences(of: "http://", with: "http://REDACTED@")
                    + "?token=REDACTED&page=1"
            ])
        try box.ok("cache", "clear", "--all", "--yes")
        try box.ok("path", "1")
        #expect(server.allRequests.last?.uri.contains("token=abc123") == true, "fetched again with the whole URL")
    }

    /// Misspelt commands and options say so; negative numbers are explained; help for a
    /// command that doesn't exist fails.
    @Test func messagesSayWhatIsWrong() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let cases: [([String], String)] = [
            (["edit", "1", "--bogus"], "Unknown option '--bogus'"),
            (["help", "nothing"], "'margin nothing' is not a command"),
            (["serach", "fox"], "did you mean 'search'?"),
            (["bookmark", "ad", "1", "2"], "did you mean 'add'?"),
            (["bookmark", "add", "1", "-1"], "-1 is not a valid number"),
            (["edit", "1"], "nothing to change"),
        ]
        for (arguments, expected) in cases {
            let result = try box.margin.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result)")
            #expect(
                result.stderr.hasPrefix("error: ") && result.stderr.contains(expected), "\(arguments): \(result.stderr)"
            )
        }
        let help = try box.ok("help", "db", "check").stdout
        #expect(!help.contains("   no longer"), "no stray indentation: \(help)")
        let manual = try String(contentsOfFile: Fixtures.root + "/man/margin.1", encoding: .utf8)
        #expect(!manual.contains("that are                     no longer"))
        let one = try box.ok("search", "zebra", "--book", "1")
        #expect(!one.stderr.contains("(s)"))
    }

    /// Folders and tags are normalised; a highlight on a removed book is refused in words.
    @Test func foldersAndTagsAreNormalised() throws {
        let box = Sandbox()
        try box.ok(
            "add", Fixtures.pdf("sample.pdf"), "--folder", " papers//ml/ ", "--tag", "a,b", "--tag", "two\nlines")
        let book = try #require(try box.books().first)
        #expect(book.string("folder") == "papers/ml")
        #expect(book["tags"] as? [String] == ["a", "b", "two lines"])
        try box.ok("edit", "1", "--folder", "/notes/", "--untag", "a")
        let edited = try #require(try box.books().first)
        #expect(edited.string("folder") == "notes")
        #expect(edited["tags"] as? [String] == ["b", "two lines"])
        #expect(try box.ok("list", "--folder", "notes/").stdout.contains("A Sample Paper"))
    }
}
