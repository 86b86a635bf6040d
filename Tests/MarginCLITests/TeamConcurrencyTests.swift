import Foundation
import TestSupport
import Testing

/// Many clients on one team library at once, each a margin process of its own (its own role,
/// cache and key), and a client killed in the middle of its writes.
@Suite struct TeamConcurrencyTests {
    static let clients = 16
    static let phrases = ["inverted index", "quick brown fox", "cairo"]

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func sixteenClientsAddAnnotateAndSearchAtOnce() throws {
        let admin = try TestCluster.freshDatabase()
        let owner = Sandbox()
        #expect(try owner.margin.run(["db", "init"], environment: ["MARGIN_LIBRARY": admin]).status == 0)
        let roles = try (0..<Self.clients).map { _ in try TestCluster.newRole("reader") }
        for role in roles {
            let granted = try owner.margin.run(["db", "grant", role], environment: ["MARGIN_LIBRARY": admin])
            #expect(granted.status == 0, "\(granted)")
        }
        // Each client also adds a PDF of its own: the sample with a comment after its end.
        let sample = try Data(contentsOf: URL(fileURLWithPath: Fixtures.pdf("sample.pdf")))
        let failures = Failures()
        var threads = [Thread]()
        let done = DispatchGroup()
        for (index, role) in roles.enumerated() {
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                let box = Sandbox()
                let library = ["MARGIN_LIBRARY": TestCluster.url(admin, as: role)]
                func run(_ arguments: [String]) -> RunResult? {
                    guard let result = try? box.margin.run(arguments, environment: library, timeout: 300) else {
                        failures.add("\(role) \(arguments): did not run")
                        return nil
                    }
                    if result.status != 0 { failures.add("\(role) \(arguments): \(result.stderr)") }
                    return result
                }
                let own = box.folder.path + "/own-\(index).pdf"
                FileManager.default.createFile(atPath: own, contents: sample + Data("\n% client \(index)\n".utf8))
                let added = run([
                    "add", own, Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf"), "--tag", "team", "--json",
                ])
                let books = (try? added?.json() as? [[String: Any]])?.compactMap {
                    ($0["book"] as? [String: Any])?["id"] as? Int
                }
                guard let books, books.count == 3 else {
                    return failures.add("\(role): add said \(String(describing: added))")
                }
                for (round, phrase) in Self.phrases.enumerated() {
                    _ = run([
                        "highlight", "add", String(books[1]), "--text", phrase, "--occurrence", "1",
                        round == 0 ? "--shared" : "--private",
                    ])
                    _ = run(["memo", "add", String(books[round % 3]), "memo \(round) of \(role)"])
                    _ = run(["bookmark", "add", String(books[0]), String(round + 1)])
                    let hits = run(["search", "zebra", "--json"])
                    if let hits, (try? hits.json() as? [Any])?.isEmpty != false {
                        failures.add("\(role): search found nothing: \(hits)")
                    }
                }
            }
            threads.append(thread)
        }
        for thread in threads { thread.start() }
        done.wait()
        #expect(failures.all.isEmpty, "\(failures.all.joined(separator: "\n"))")

        // Every write landed, once.
        func count(_ sql: String) throws -> Int { Int(try TestCluster.psql(admin, sql)) ?? -1 }
        #expect(try count("SELECT count(*) FROM margin.book") == Self.clients + 2)
        #expect(try count("SELECT count(*) FROM margin.file") == Self.clients + 2)
        #expect(try count("SELECT count(*) FROM margin.tag") == Self.clients + 2)
        #expect(try count("SELECT count(*) FROM margin.highlight") == Self.clients * Self.phrases.count)
        #expect(try count("SELECT count(*) FROM margin.memo") == Self.clients * Self.phrases.count)
        #expect(try count("SELECT count(*) FROM margin.bookmark") == Self.clients * Self.phrases.count)
        #expect(try count("SELECT count(DISTINCT owner) FROM margin.highlight") == Self.clients)
        #expect(try count("SELECT count(*) FROM margin.highlight WHERE shared") == Self.clients)
        // Each sees its own and the shared ones.
        let first = Sandbox()
        let seen = try first.margin.run(
            ["highlight", "list", "--all-users", "--json"],
            environment: ["MARGIN_LIBRARY": TestCluster.url(admin, as: roles[0])])
        #expect(try #require(try seen.json() as? [Any]).count == Self.clients + Self.phrases.count - 1)
    }

    /// A client killed while it adds a book and writes annotations leaves nothing half-written:
    /// every stored PDF is whole, every book has all its pages and one version, and the library
    /// takes the same work afterwards.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aClientKilledMidWriteLeavesNothingHalfWritten() throws {
        let url = try TestCluster.freshDatabase()
        let library = ["MARGIN_LIBRARY": url]
        let box = Sandbox()
        #expect(try box.margin.run(["db", "init"], environment: library).status == 0)
        let pdfs = [
            "sample.pdf", "second.pdf", "prose.pdf", "layout.pdf", "mixed.pdf", "untitled-notes.pdf", "word-export.pdf",
            "sample-revised.pdf",
        ].map(Fixtures.pdf)
        // Killed after a range of delays: whatever it was doing when the signal came.
        for (index, delay) in [0.05, 0.15, 0.3, 0.5, 0.8, 1.2].enumerated() {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: MarginRunner.binary)
            process.arguments = ["add", "-q"] + pdfs + ["--tag", "round-\(index)"]
            var environment = ProcessInfo.processInfo.environment
            environment["MARGIN_HOME"] = box.folder.path + "/killed-\(index)"
            environment["HOME"] = box.folder.path + "/killed-\(index)/home"
            environment["MARGIN_LIBRARY"] = url
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.start()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try Self.checkWhole(url)
        }
        // The same work runs to the end afterwards, and the library is consistent.
        let added = try box.margin.run(["add", "-q"] + pdfs, environment: library)
        #expect(added.status == 0, "\(added)")
        try Self.checkWhole(url)
        #expect(try TestCluster.psql(url, "SELECT count(*) FROM margin.book") == String(pdfs.count))
        let check = try box.margin.run(["db", "check"], environment: library)
        #expect(check.status == 0, "\(check)")
    }

    static func checkWhole(_ url: String) throws {
        // Files: the chunks add up to the size recorded.
        let partial = try TestCluster.psql(
            url,
            "SELECT count(*) FROM margin.file f WHERE f.bytes <> coalesce((SELECT sum(length(data)) FROM margin.file_chunk c WHERE c.sha256 = f.sha256), 0)"
        )
        #expect(partial == "0", "a PDF is stored in part")
        // Books: indexed ones have every page; each has its version and source.
        let short = try TestCluster.psql(
            url,
            "SELECT count(*) FROM margin.book b WHERE b.\"indexedAt\" IS NOT NULL AND b.pages <> (SELECT count(*) FROM margin.page p WHERE p.\"bookId\" = b.id)"
        )
        #expect(short == "0", "a book lacks pages")
        let bare = try TestCluster.psql(
            url,
            "SELECT count(*) FROM margin.book b WHERE NOT EXISTS (SELECT 1 FROM margin.version v WHERE v.\"bookId\" = b.id) OR NOT EXISTS (SELECT 1 FROM margin.source s WHERE s.\"bookId\" = b.id) OR NOT EXISTS (SELECT 1 FROM margin.file f WHERE f.sha256 = b.sha256)"
        )
        #expect(bare == "0", "a book lacks its version, source or file")
    }
}

/// Failures gathered from many threads.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var list = [String]()
    func add(_ failure: String) { lock.withLock { list.append(failure) } }
    var all: [String] { lock.withLock { list } }
}

/// `cache prune` on a team library collects the stored PDFs no book uses, once they are old
/// enough that no client can be adding their book.
@Suite struct TeamFileCollectionTests {
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func pruneRemovesOldUnusedStoredPDFsOnly() throws {
        let url = try TestCluster.freshDatabase()
        let box = Sandbox()
        let library = ["MARGIN_LIBRARY": url]
        #expect(try box.margin.run(["add", "-q", Fixtures.pdf("sample.pdf")], environment: library).status == 0)
        // What a client killed between storing a PDF and its book leaves: an old one and a new one
        // (bytes that hash to their names: the database checks that too).
        var names = [String]()
        for (data, age) in [("abc", "2 hours"), ("abd", "1 minute")] {
            let sha = "encode(sha256('\(data)'::bytea), 'hex')"
            try TestCluster.psql(
                url,
                "INSERT INTO margin.file (sha256, bytes, \"addedAt\") VALUES (\(sha), 3, now() - interval '\(age)'); "
                    + "INSERT INTO margin.file_chunk (sha256, n, data) VALUES (\(sha), 0, '\(data)')")
            names.append(try TestCluster.psql(url, "SELECT \(sha)"))
        }
        let pruned = try box.margin.run(["cache", "prune", "--json"], environment: library)
        #expect(pruned.status == 0, "\(pruned)")
        let report = try #require(try pruned.json() as? [String: Any])
        #expect(report["removedFromDatabase"] as? [String] == [names[0]])
        #expect(try TestCluster.psql(url, "SELECT count(*) FROM margin.file") == "2")
        #expect(try TestCluster.psql(url, "SELECT count(*) FROM margin.file_chunk WHERE sha256 = '\(names[0])'") == "0")
        // The book's PDF stays, and a machine that never had it still gets it.
        let other = Sandbox()
        let path = try other.margin.run(["path", "1"], environment: library)
        #expect(
            path.status == 0
                && FileManager.default.fileExists(atPath: path.stdout.trimmingCharacters(in: .whitespacesAndNewlines)),
            "\(path)")
    }
}
