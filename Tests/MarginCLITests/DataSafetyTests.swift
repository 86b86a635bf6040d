import Foundation
import TestSupport
import Testing

/// A small tmpfs mounted for one test, to fill a disk for real. Needs root and mount rights;
/// tests that need one are skipped where it can't be made.
final class SmallDisk {
    let path: String
    private let folder = TemporaryFolder()

    init?(kilobytes: Int) {
        path = folder.path + "/disk"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.shell("mount -t tmpfs -o size=\(kilobytes)k tmpfs '\(path)'") == 0 else { return nil }
    }

    deinit { _ = Self.shell("umount -l '\(path)'") }

    /// Fills the disk until a write fails.
    func fill() {
        _ = Self.shell("dd if=/dev/zero of='\(path)/filler' bs=4k 2>/dev/null; sync")
    }

    static let available: Bool = {
        guard getuid() == 0 else { return false }
        return SmallDisk(kilobytes: 64) != nil
    }()

    @discardableResult
    static func shell(_ command: String) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.start()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Runs several margin processes at once; returns their results in order.
func concurrently(_ box: Sandbox, _ commands: [[String]]) -> [RunResult] {
    let results = ResultBox(count: commands.count)
    DispatchQueue.concurrentPerform(iterations: commands.count) { index in
        results.set(
            index,
            (try? box.margin.run(commands[index], timeout: 120))
                ?? RunResult(status: -1, stdout: "", stderr: "did not run"))
    }
    return results.all
}

final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [RunResult?]
    init(count: Int) { results = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ result: RunResult) { lock.lock(); results[index] = result; lock.unlock() }
    var all: [RunResult] {
        lock.lock(); defer { lock.unlock() }; return results.map { $0 ?? RunResult(status: -1, stdout: "", stderr: "") }
    }
}

func mode(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

/// Defects where data was lost or corrupted: each test failed before its fix.
@Suite struct DataSafetyTests {
    /// Two downloads of one URL at once: each writes its own part, and the cached file always
    /// holds the bytes that were hashed (before: one renamed the other's unfinished part).
    @Test func simultaneousDownloadsOfOneURLNeverCorruptTheCache() throws {
        let bytes = Fixtures.bytes(Fixtures.pdf("sample-v2.pdf"))
        let server = try TestHTTPServer(routes: [
            "/slow.pdf": .handler { _ in
                Reply(
                    headers: [("Content-Type", "application/pdf"), ("ETag", "\"v2\"")], body: bytes,
                    drip: (bytes: max(1, bytes.count / 20), delay: 0.02))
            }
        ])
        defer { server.shutdown() }
        let url = server.url("/slow.pdf")
        // One command, the same URL three times.
        let box = Sandbox()
        let result = try box.ok("add", url, url, url, "--json")
        let outcomes = try #require(try result.json() as? [[String: Any]])
        #expect(outcomes.count == 3 && outcomes.allSatisfy { $0["ok"] as? Bool == true }, "\(result)")
        #expect(try box.books().count == 1)
        // Four processes at once.
        let many = Sandbox()
        let results = concurrently(many, Array(repeating: ["add", url], count: 4))
        for result in results { #expect(result.status == 0, "\(result)") }
        let books = try many.books()
        #expect(books.count == 1)
        let file = try #require(books.first?.string("file"))
        #expect(Fixtures.bytes(file) == bytes, "the cached bytes are the served bytes")
        try many.ok("db", "check")
        #expect(many.folder.files().filter { $0.contains("cache/tmp/") }.isEmpty, "no part or lock left")
    }

    /// A full disk fails the export or render with "disk full" and keeps the old file (before:
    /// success was reported with a truncated or empty file, and --force replaced a good one).
    @Test(.enabled(if: SmallDisk.available, "needs root to mount a small tmpfs"))
    func aFullDiskFailsWritesAndKeepsTheOldFile() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("highlight", "add", "sample", "--text", "fox", "--occurrence", "1")
        let disk = try #require(SmallDisk(kilobytes: 256))
        let good = disk.path + "/annotated.pdf"
        try box.ok("export", "sample", "--format", "pdf", "-o", good)
        let before = Fixtures.bytes(good)
        #expect(before.count > 1000)
        disk.fill()
        for arguments in [
            ["export", "sample", "--format", "pdf", "-o", good, "--force"],
            ["render", "sample", "--page", "1", "--format", "pdf", "-o", good, "--force"],
            ["render", "sample", "--page", "1", "--dpi", "150", "-o", disk.path + "/page.png"],
            ["export", "sample", "--format", "markdown", "-o", disk.path + "/notes.md"],
            ["export", "--all", "--format", "json", "-o", disk.path + "/backup.json"],
        ] {
            let result = try box.fails(arguments)
            #expect(result.stderr.contains("disk is full"), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("NSCocoaErrorDomain"))
        }
        #expect(Fixtures.bytes(good) == before, "the good file is untouched")
        let left = try FileManager.default.contentsOfDirectory(atPath: disk.path).sorted()
        #expect(left == ["annotated.pdf", "filler"], "no temporary or partial file: \(left)")
    }

    /// A library on a full disk refuses a write in words and keeps what it had.
    @Test(.enabled(if: SmallDisk.available, "needs root to mount a small tmpfs"))
    func aFullDiskKeepsTheLibrary() throws {
        let disk = try #require(SmallDisk(kilobytes: 4096))
        let runner = MarginRunner(home: disk.path + "/library")
        #expect(try runner.run(["add", Fixtures.pdf("sample.pdf")]).status == 0)
        #expect(try runner.run(["memo", "add", "sample", "kept"]).status == 0)
        disk.fill()
        let result = try runner.run(["memo", "add", "sample", String(repeating: "lost ", count: 20_000)])
        #expect(result.status != 0)
        #expect(result.stderr.contains("disk is full"), "\(result)")
        #expect(!result.stderr.contains("SQLite error"))
        SmallDisk.shell("rm -f '\(disk.path)/filler'")
        let memos = try #require(try runner.run(["memo", "list", "--json"]).json() as? [[String: Any]])
        #expect(memos.map { $0.string("text") } == ["kept"])
        #expect(try runner.run(["db", "check"]).status == 0)
    }

    /// `cache clear` keeps what it can't fetch again; `cache verify` keeps a damaged copy it
    /// can't restore; `rm` keeps a file another book still uses.
    @Test func theCacheNeverDropsTheOnlyCopy() throws {
        let original = Fixtures.bytes(Fixtures.pdf("sample.pdf"))
        let revised = Fixtures.bytes(Fixtures.pdf("sample-revised.pdf"))
        let server = try TestHTTPServer(routes: ["/paper.pdf": .validated(original, etag: "\"one\"")])
        defer { server.shutdown() }
        let box = Sandbox()
        // A local source whose file then changes.
        let local = box.folder.path + "/local.pdf"
        try FileManager.default.copyItem(atPath: Fixtures.pdf("second.pdf"), toPath: local)
        try box.ok("add", local)
        try FileManager.default.removeItem(atPath: local)
        try FileManager.default.copyItem(atPath: Fixtures.pdf("mixed.pdf"), toPath: local)
        // A URL book refreshed: the old version is only in the cache.
        try box.ok("add", server.url("/paper.pdf"))
        server.setRoute(
            "/paper.pdf", .validated(revised, etag: "\"two\"", lastModified: "Thu, 22 Oct 2026 07:28:00 GMT"))
        try box.ok("refresh", "sample")
        let versions = try #require(try box.ok("book", "versions", "sample", "--json").json() as? [[String: Any]])
        let old = try #require(versions.first { $0["current"] as? Bool == false }?.string("sha256"))
        // A --keep-old book: its served file is no longer what its URL serves.
        let keep = try TestHTTPServer(routes: [
            "/keep.pdf": .validated(Fixtures.bytes(Fixtures.pdf("untitled-notes.pdf")), etag: "\"a\"")
        ])
        defer { keep.shutdown() }
        try box.ok("add", keep.url("/keep.pdf"))
        keep.setRoute(
            "/keep.pdf",
            .validated(
                Fixtures.bytes(Fixtures.pdf("sample-v2.pdf")), etag: "\"b\"",
                lastModified: "Thu, 22 Oct 2026 07:28:00 GMT"))
        try box.ok("refresh", "keep", "--keep-old")
        let kept = try #require(try box.books().first { $0.string("title") == "keep" }?.string("file"))

        let clear = try #require(try box.ok("cache", "clear", "--json").json() as? [String: Any])
        let removed = clear["removed"] as? [String] ?? []
        let store = box.home + "/cache/pdfs/"
        #expect(!removed.contains { $0.contains(old) }, "an old version stays: \(removed)")
        #expect(FileManager.default.fileExists(atPath: kept), "the served file of a --keep-old book stays")
        let second = try #require(try box.books().first { $0.string("title")?.contains("Field") == true })
        #expect(second["cached"] as? Bool == true, "the copy of a changed local file stays")
        #expect(
            removed.count == 1 && removed[0].hasPrefix(store), "only the refreshed current version goes: \(removed)")
        try box.ok("db", "check", "--repair")

        // verify: a damaged copy it can't restore is kept aside.
        let secondFile = try #require(second.string("file"))
        var damaged = Fixtures.bytes(secondFile)
        damaged[damaged.count / 2] ^= 0xff
        try Data(damaged).write(to: URL(fileURLWithPath: secondFile))
        let verify = try box.fails("cache", "verify")
        #expect(verify.stderr.contains("damaged/"), "\(verify)")
        let aside = box.folder.files().filter { $0.contains("cache/damaged/") }
        #expect(aside.count == 1, "the damaged copy is kept: \(box.folder.files())")

        // rm: a file another book keeps as an old version stays.
        let other = Sandbox()
        let shared = try TestHTTPServer(routes: ["/a.pdf": .validated(original, etag: "\"1\"")])
        defer { shared.shutdown() }
        try other.ok("add", shared.url("/a.pdf"))
        shared.setRoute("/a.pdf", .validated(revised, etag: "\"2\"", lastModified: "Thu, 22 Oct 2026 07:28:00 GMT"))
        try other.ok("refresh")
        try other.ok("add", Fixtures.pdf("sample.pdf"), "--title", "Same bytes, another book")
        let oldFile = other.home + "/cache/pdfs/\(old.prefix(2))/\(old).pdf"
        #expect(FileManager.default.fileExists(atPath: oldFile))
        try other.ok("rm", "Same bytes")
        #expect(FileManager.default.fileExists(atPath: oldFile), "the other book's old version is still there")
        try other.ok("db", "check")
    }

    /// Per-book exports get unique names, and a refused file stops the export before anything
    /// is written (before: non-Latin titles all became book.md and overwrote each other).
    @Test func perBookExportsHaveUniqueNamesAndAreAllOrNothing() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"), "--title", "Война и мир")
        try box.ok("add", Fixtures.pdf("second.pdf"), "--title", "東京物語")
        try box.ok("add", Fixtures.pdf("mixed.pdf"), "--title", "Ελληνικά")
        let folder = box.folder.path + "/out"
        try box.ok("export", "--all", "--format", "markdown", "-o", folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names == ["book-1.md", "book-2.md", "book-3.md"], "\(names)")
        #expect(try String(contentsOfFile: folder + "/book-2.md", encoding: .utf8).contains("東京物語"))
        // The third file exists: nothing is written, not even the first two.
        try FileManager.default.removeItem(atPath: folder + "/book-1.md")
        try FileManager.default.removeItem(atPath: folder + "/book-2.md")
        let refused = try box.fails("export", "--all", "--format", "markdown", "-o", folder)
        #expect(refused.stderr.contains("book-3.md already exists"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["book-3.md"], "all or nothing")
        let pdfs = box.folder.path + "/pdfs"
        try box.ok("export", "--all", "--format", "pdf", "-o", pdfs)
        #expect(try FileManager.default.contentsOfDirectory(atPath: pdfs).count == 3)
    }

    /// Import checks the backup against the library instead of trusting it.
    @Test func importChecksTheBackup() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("add", Fixtures.pdf("second.pdf"))
        try box.ok("highlight", "add", "sample", "--text", "fox", "--occurrence", "1")
        try box.ok("memo", "add", "sample", "--page", "1", "a memo")
        let backupFile = box.folder.path + "/backup.json"
        try box.ok("export", "--all", "--format", "json", "-o", backupFile)
        let text = try String(contentsOfFile: backupFile, encoding: .utf8)
        var backup = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var books = try #require(backup["books"] as? [[String: Any]])
        func attempt(_ change: ([[String: Any]]) -> [[String: Any]], _ expected: String) throws {
            var copy = backup
            copy["books"] = change(books)
            let data = try JSONSerialization.data(withJSONObject: copy)
            let file = box.folder.path + "/changed.json"
            try data.write(to: URL(fileURLWithPath: file))
            let state = {
                try ["list", "highlight", "memo"].map {
                    try box.margin.run($0 == "list" ? ["list", "--json"] : [$0, "list", "--json"]).stdout
                }
            }
            let before = try state()
            let result = try box.fails("import", file)
            #expect(result.stderr.contains(expected), "\(result.stderr)")
            #expect(!result.stderr.contains("constraint"), "no raw SQL")
            #expect(try state() == before, "nothing imported")
        }
        // A highlight placed under the other book would move there.
        try attempt(
            { books in
                var books = books
                books[1]["highlights"] = books[0]["highlights"]
                books[0]["highlights"] = []
                return books
            }, "belongs to 'A Sample Paper'")
        try attempt(
            { books in
                var books = books
                books[0]["pages"] = 5000
                return books
            }, "has 3 pages")
        try attempt(
            { books in
                var books = books
                books[0]["bytes"] = -5
                return books
            }, "bytes: must be at least 1")
        // A book UUID reused for different bytes.
        try attempt(
            { books in
                var books = books
                books[1]["uuid"] = books[0]["uuid"]
                return books
            }, "UUID of 'A Sample Paper'")

        // Counts: each annotation once (a conflict among updated or unchanged).
        var highlight = try #require((books[0]["highlights"] as? [[String: Any]])?.first)
        highlight["note"] = "changed later"
        highlight["updatedAt"] = "2099-01-01T00:00:00.000Z"
        books[0]["highlights"] = [highlight]
        backup["books"] = books
        try JSONSerialization.data(withJSONObject: backup).write(to: URL(fileURLWithPath: backupFile))
        let report = try #require(try box.ok("import", backupFile, "--json").json() as? [String: Any])
        #expect(report.int("added") == 0 && report.int("updated") == 1 && report.int("unchanged") == 1, "\(report)")
        #expect(report.int("conflicts") == 1)
        let human = try box.ok("import", backupFile).stdout
        #expect(human.contains("imported 2 annotations: 0 added, 0 updated, 2 unchanged"), "\(human)")
    }

    /// A backup made before a refresh imports into the same library (matched by UUID and by the
    /// SHA-256 of every version).
    @Test func aBackupFromBeforeARefreshImports() throws {
        let server = try TestHTTPServer(routes: [
            "/paper.pdf": .validated(Fixtures.bytes(Fixtures.pdf("sample.pdf")), etag: "\"one\"")
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        try box.ok("add", server.url("/paper.pdf"))
        try box.ok("bookmark", "add", "sample", "2", "--label", "before")
        let backupFile = box.folder.path + "/backup.json"
        try box.ok("export", "--all", "--format", "json", "-o", backupFile)
        server.setRoute(
            "/paper.pdf",
            .validated(
                Fixtures.bytes(Fixtures.pdf("sample-revised.pdf")), etag: "\"two\"",
                lastModified: "Thu, 22 Oct 2026 07:28:00 GMT"))
        try box.ok("refresh")
        let report = try #require(try box.ok("import", backupFile, "--json").json() as? [String: Any])
        #expect((report["books"] as? [String: Int])?["unchanged"] == 1, "\(report)")
        #expect(try box.books().count == 1)
    }

    /// The database file alone is the whole library after a write command: the WAL is
    /// checkpointed; `db check` notices a database that lost writes; a truncated file is refused.
    @Test func theDatabaseFileIsWholeAndLossIsNoticed() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("memo", "add", "sample", "first memo")
        let database = box.home + "/library.sqlite"
        #expect((fileSize(database + "-wal") ?? 0) == 0, "the WAL is checkpointed and emptied")
        // A copy of library.sqlite alone holds everything.
        let copy = Sandbox()
        try FileManager.default.createDirectory(atPath: copy.home, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: database, toPath: copy.home + "/library.sqlite")
        let memos = try #require(try copy.ok("memo", "list", "--json").json() as? [[String: Any]])
        #expect(memos.first?.string("text") == "first memo")
        // Deleting the -wal after a command loses nothing.
        try? FileManager.default.removeItem(atPath: database + "-wal")
        #expect((try box.ok("memo", "list", "--json").json() as? [Any])?.count == 1)
        // An older copy put in place: db check says writes are missing.
        let older = box.folder.path + "/older.sqlite"
        try FileManager.default.copyItem(atPath: database, toPath: older)
        try box.ok("memo", "add", "sample", "second memo")
        try? FileManager.default.removeItem(atPath: database + "-wal")
        try? FileManager.default.removeItem(atPath: database + "-shm")
        try FileManager.default.removeItem(atPath: database)
        try FileManager.default.copyItem(atPath: older, toPath: database)
        let check = try box.fails("db", "check")
        #expect(check.stdout.contains("-wal file was lost or an older copy"), "\(check)")
        // A truncated file is refused, with what to do.
        let truncated = Sandbox()
        try truncated.ok("add", Fixtures.pdf("sample.pdf"))
        let path = truncated.home + "/library.sqlite"
        let bytes = Fixtures.bytes(path)
        try? FileManager.default.removeItem(atPath: path + "-wal")
        try? FileManager.default.removeItem(atPath: path + "-shm")
        try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: path))
        for arguments in [["list"], ["memo", "add", "sample", "x"]] {
            let result = try truncated.fails(arguments)
            #expect(result.stderr.contains("is truncated"), "\(result)")
            #expect(result.stderr.contains("restore it"))
        }
        #expect(Fixtures.bytes(path).count == bytes.count / 2, "nothing written to it")
    }

    /// Many processes opening a new library at once all succeed (before: "database is locked",
    /// "table book already exists").
    @Test func manyProcessesOpenANewLibraryAtOnce() throws {
        for round in 0..<3 {
            let box = Sandbox()
            let commands = (0..<6).map { index -> [String] in
                index % 2 == 0
                    ? ["add", Fixtures.pdf(["sample.pdf", "second.pdf", "mixed.pdf"][index / 2])] : ["list", "--json"]
            }
            let results = concurrently(box, commands)
            for result in results { #expect(result.status == 0, "round \(round): \(result)") }
            #expect(try box.books().count == 3, "round \(round)")
            try box.ok("db", "check")
        }
    }

    /// Opening an old library from several processes at once: one migrates, all succeed, and the
    /// backup is user-only.
    @Test func manyProcessesOpenAnOldLibraryAtOnce() throws {
        let box = Sandbox()
        try FileManager.default.createDirectory(atPath: box.home, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.root + "/fixtures/db/v1.sqlite", toPath: box.home + "/library.sqlite")
        let results = concurrently(box, Array(repeating: ["list", "--json"], count: 6))
        for result in results { #expect(result.status == 0, "\(result)") }
        let backups = box.folder.files().filter { $0.contains(".bak-") }
        #expect(backups.count == 1, "\(backups)")
        for backup in backups { #expect(mode(box.folder.path + "/" + backup) == 0o600) }
    }

    /// Temporaries of processes that are gone are cleaned by the next run; `db check` reports
    /// unused cached files.
    @Test func leftoversAreCleanedAndReported() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let tmp = box.home + "/cache/tmp"
        // A process id that is not running (beyond the default pid_max).
        #expect(FileManager.default.createFile(atPath: tmp + "/4999999-dead.part", contents: Data("x".utf8)))
        #expect(FileManager.default.createFile(atPath: tmp + "/download-0123.part.lock", contents: Data()))
        // What Foundation's write-and-rename leaves when killed in between: its process id in
        // hexadecimal (4C4B3F is 4999999); one of a living process (this one) stays.
        #expect(FileManager.default.createFile(atPath: tmp + "/.dat.nosync4C4B3F.Ab12Cd", contents: Data("x".utf8)))
        let living = tmp + "/.dat.nosync" + String(getpid(), radix: 16, uppercase: true) + ".Ef34Gh"
        #expect(FileManager.default.createFile(atPath: living, contents: Data("x".utf8)))
        let out = box.folder.path + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(atPath: out + "/.notes.md.margin-4999999-abcd", contents: Data("half".utf8)))
        try box.ok("list")
        #expect(!FileManager.default.fileExists(atPath: tmp + "/4999999-dead.part"))
        #expect(!FileManager.default.fileExists(atPath: tmp + "/download-0123.part.lock"))
        #expect(!FileManager.default.fileExists(atPath: tmp + "/.dat.nosync4C4B3F.Ab12Cd"))
        #expect(FileManager.default.fileExists(atPath: living))
        try FileManager.default.removeItem(atPath: living)
        try box.ok("export", "sample", "--format", "markdown", "-o", out + "/notes.md")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["notes.md"])
        // An unused file in the cache is reported.
        let stray = box.home + "/cache/pdfs/ab/" + String(repeating: "ab", count: 32) + ".pdf"
        try FileManager.default.createDirectory(atPath: box.home + "/cache/pdfs/ab", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.pdf("second.pdf"), toPath: stray)
        let check = try #require(try box.margin.run(["db", "check", "--json"]).json() as? [String: Any])
        #expect(check["unusedFiles"] as? [String] == [stray])
        let human = try box.margin.run(["db", "check"]).stdout
        #expect(human.contains("1 file no book uses"), "\(human)")
    }
}

func fileSize(_ path: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
}
