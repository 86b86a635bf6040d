import Foundation
import TestSupport
import Testing

/// The command-line contract, run as one session on a folder library (SQLite) and on a team
/// library (PostgreSQL): every command answers the same JSON on both (dates, UUIDs, paths and
/// who made what aside), and fails the same way.
@Suite struct BackendContractTests {
    /// One library, either kind, driven like a user would.
    struct Library {
        let box = Sandbox()
        let environment: [String: String]

        func run(_ arguments: [String], stdin: String? = nil) throws -> RunResult {
            try box.margin.run(arguments, stdin: stdin, environment: environment)
        }
    }

    /// The answer with what legitimately differs between two libraries taken out.
    static func normalized(_ value: Any) -> Any {
        let varying: Set<String> = [
            "addedAt", "updatedAt", "createdAt", "openedAt", "exportedAt", "uuid", "file", "author", "addedBy",
            "checkedAt",
        ]
        if let object = value as? [String: Any] {
            return object.filter { !varying.contains($0.key) }.mapValues(normalized)
        }
        if let array = value as? [Any] { return array.map(normalized) }
        return value
    }

    static func same(_ a: Any, _ b: Any) -> Bool {
        NSDictionary(dictionary: ["v": normalized(a)]).isEqual(to: ["v": normalized(b)])
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func everyCommandAnswersTheSameOnBothBackends() throws {
        let personal = Library(environment: [:])
        let team = Library(environment: ["MARGIN_LIBRARY": try TestCluster.freshDatabase()])
        let steps: [[String]] = [
            ["add", Fixtures.pdf("sample.pdf"), "--folder", "papers", "--tag", "classic", "--tag", "Notes"],
            ["add", Fixtures.pdf("second.pdf"), "--title", "Field Notes, Spring", "--author", "Gil"],
            ["add", Fixtures.pdf("prose.pdf"), "--tag", "notes"],
            ["add", Fixtures.pdf("sample.pdf")],
            ["list"], ["list", "--tag", "NOTES"], ["list", "--folder", "papers"], ["list", "--sort", "title"],
            ["list", "--sort", "author", "--limit", "1", "--offset", "1"],
            ["show", "sample"], ["edit", "2", "--folder", "field", "--untag", "missing", "--memo", "a book memo"],
            ["search", "inverted index"], ["search", "\"quick brown\""], ["search", "fox", "--case-sensitive"],
            ["search", "Fox", "--case-sensitive"], ["search", "colou?r|zebra", "--regex"],
            ["search", "in", "--whole-word"], ["search", "herons", "--book", "2"], ["search", "fox", "--limit", "1"],
            ["text", "1", "--pages", "2-3"],
            [
                "highlight", "add", "1", "--text", "inverted index", "--occurrence", "1", "--note", "key idea",
                "--color", "green",
            ],
            ["highlight", "add", "1", "--text", "quick brown fox", "--all"],
            ["highlight", "edit", "2", "--note", "twice"], ["highlight", "list"], ["highlight", "list", "1"],
            ["highlight", "rm", "3"],
            ["memo", "add", "1", "--page", "3", "zebras are rare"], ["memo", "add", "2", "on the whole book"],
            ["memo", "edit", "2", "on the whole notebook"], ["memo", "list"],
            ["bookmark", "add", "1", "3", "--label", "rendering"], ["bookmark", "edit", "1", "--label", "cairo"],
            ["bookmark", "list"], ["annotations", "1"], ["search", "zebras", "--annotations"],
            ["export", "1", "--format", "json"], ["export", "--all", "--format", "json"],
            ["recent"], ["db", "status"], ["db", "check"],
            // What must fail, fails the same way on both.
            ["show", "no such book"], ["render", "1", "--page", "9", "-o", "/tmp/never.png"],
            ["highlight", "add", "1", "--text", "not on any page at all", "--occurrence", "1"],
            ["memo", "edit", "99", "x"],
            ["add", Fixtures.pdf("truncated.pdf")], ["add", Fixtures.pdf("not-a-pdf.html")],
            ["rm", "1"], ["rm", "3", "--yes"], ["list"], ["bookmark", "rm", "1"], ["db", "status"],
        ]
        var failed = [[String]]()
        #expect(!Self.same(["title": "a", "addedAt": "x"], ["title": "b", "addedAt": "x"]), "the comparison tells")
        for step in steps {
            let arguments = step + ["--json"]
            let mine = try personal.run(arguments)
            let ours = try team.run(arguments)
            #expect(mine.status == ours.status, "\(step): \(mine) vs \(ours)")
            if mine.status == 0 {
                let (a, b) = (try mine.json(), try ours.json())
                if step.prefix(2) == ["db", "status"] {
                    // The counts, not where the database is.
                    let counts = { (value: Any) in (value as? [String: Any])?["counts"] as? [String: Int] }
                    #expect(counts(a) == counts(b), "\(step)")
                } else {
                    #expect(Self.same(a, b), "\(step):\n\(mine.stdout)\nvs\n\(ours.stdout)")
                }
            } else {
                failed.append(step)
                #expect(mine.stderrLines.first == ours.stderrLines.first, "\(step)")
            }
        }
        #expect(failed.count == 7, "the seven bad inputs, and only they, fail: \(failed)")
        // The count of pages past the limit (a capped count on each backend) says the same.
        let notes = try [personal, team].map { try $0.run(["search", "the", "--limit", "1"]).stderrLines }
        #expect(notes[0] == notes[1])
        #expect(notes[0].contains { $0.contains("more pages match") || $0.contains("more page matches") }, "\(notes)")
        // The PDF with real annotations, and a backup's round trip, on both.
        for library in [personal, team] {
            let pdf = library.box.folder.path + "/annotated.pdf"
            #expect(try library.run(["export", "2", "--format", "pdf", "-o", pdf]).status == 0)
            let backup = try library.run(["export", "--all", "--format", "json"]).stdout
            let dry = try library.run(["import", "-", "--dry-run", "--json"], stdin: backup)
            #expect(dry.status == 0, "\(dry)")
            let counts = try #require(try dry.json() as? [String: Any])
            #expect((counts["added"] as? Int) == 0, "importing its own backup adds nothing: \(counts)")
        }
    }
}
