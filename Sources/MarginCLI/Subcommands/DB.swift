import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct DB: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "db",
            abstract: "Inspect the library database.",
            subcommands: Margin.subcommands(of: DB.self)
        )

        struct Grant: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "grant",
                abstract: "Let a PostgreSQL role use the team library.",
                discussion: """
                    The role (made beforehand with CREATE ROLE NAME LOGIN) may then read and add \
                    books, search, and add annotations, which are its own: private unless it shares \
                    them (--shared), and only it can change or remove them. PostgreSQL enforces \
                    that with row-level security, for psql as for margin. The library's owner (the \
                    role that ran 'margin db init') grants; tables that later migrations add are \
                    granted too.

                    Example:
                      margin --library postgres://admin@db.lab.example/papers db grant alice
                    """
            )

            @Argument(help: "The PostgreSQL role.") var role: String
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let library = try global.openLibrary()
                guard let team = library.database as? any TeamStore else {
                    throw MarginError.invalidArgument(
                        "db grant is for a team library: give --library postgres://USER@HOST[:PORT]/DB")
                }
                try team.grant(role)
                try await global.show(["granted": role]) {
                    Console.out("\(role) may now use \(library.database.path ?? "the library")")
                }
            }
        }

        struct Copy: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "copy",
                abstract: "Copy the whole library into another one (a folder or a postgres:// URL).",
                discussion: """
                    Books with their sources, tags, versions and page text, bookmarks, highlights and \
                    memos with their UUIDs and dates, and the PDFs, from the library this command \
                    opens (--library, $MARGIN_LIBRARY or $MARGIN_HOME) into --to, in either \
                    direction between SQLite and PostgreSQL. Rows are matched by SHA-256 (books) and \
                    UUID (annotations): running it twice changes nothing, and a destination that \
                    has some of the books is merged into. The destination's write is one \
                    transaction.

                    Examples:
                      margin db copy --to postgres://alice@db.lab.example/papers
                      margin --library postgres://alice@db.lab.example/papers db copy --to ~/papers-backup
                    """
            )

            @Option(
                help: ArgumentHelp(
                    "The library to copy into: a folder or postgres://USER@HOST[:PORT]/DB.", valueName: "DIR|URL"))
            var to: String

            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let source = try global.openLibrary()
                var target = global
                target.library = to
                let destination = try target.openLibrary(creating: true)
                guard destination.database.path != source.database.path || destination.paths != source.paths else {
                    throw MarginError.invalidArgument("--to names the library being copied")
                }
                let report = try await source.copy(to: destination)
                try await global.show(report) {
                    Console.out(
                        "copied \(count(report.books, "book")), \(report.pages) pages, \(count(report.highlights, "highlight")), "
                            + "\(count(report.memos, "memo")), \(count(report.bookmarks, "bookmark")) and \(count(report.filesAdded, "new PDF")) into \(report.destination)"
                    )
                    if !report.filesMissing.isEmpty {
                        global.note(
                            "note: \(count(report.filesMissing.count, "book")) had no cached PDF to copy (\(report.filesMissing.map(String.init).joined(separator: " "))); their sources can fetch them"
                        )
                    }
                }
            }
        }

        struct Init: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "init",
                abstract: "Create the library's schema, or bring it up to date.",
                discussion: """
                    For a team library on PostgreSQL (--library postgres://USER@HOST[:PORT]/DB or \
                    $MARGIN_LIBRARY): creates the schema 'margin' and its tables, or applies the \
                    migrations it lacks, each in one transaction; a schema newer than this margin is \
                    refused untouched. A folder library is created the same way by add or import, \
                    and upgraded when any command opens it.
                    """
            )

            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let library = try global.openLibrary(creating: true)
                let schema = try library.database.schemaStatus()
                try await global.show(schema) {
                    Console.out(
                        "schema     version \(schema.version) of \(schema.latest) at \(library.database.path ?? library.paths.database)"
                    )
                }
            }
        }

        struct Status: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "status",
                abstract: "Show the schema version, pending migrations, counts and paths.",
                discussion: """
                    On a team library also the team helper answering its commands, if one runs \
                    (on by default; MARGIN_TEAM_HELPER=MINUTES sets how long it waits for a \
                    command, 0 turns it off: see the README).
                    """
            )

            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let library = try global.openLibrary()
                let status = try await library.status()
                let helper = library.paths.location.isServer ? TeamHelper.status() : nil
                try await global.show(StatusView(status: status, helper: helper)) {
                    let size = library.isAbsent ? "not made yet" : formatBytes(status.databaseBytes)
                    Console.out("database   \(status.database)" + (status.user == nil ? " (\(size))" : ""))
                    Console.out("cache      \(status.cache)")
                    if let user = status.user {
                        Console.out("user       \(user)" + (status.tls == true ? " (TLS)" : " (not encrypted)"))
                    }
                    Console.out("schema     version \(status.schema.version) of \(status.schema.latest)")
                    Console.out(
                        "pending    \(status.schema.pending.isEmpty ? "none" : status.schema.pending.joined(separator: ", "))"
                    )
                    // The tables' words, as a person reads them (outlines and page labels; OCR).
                    let said = ["guides": "outlines", "recognizedPages": "ocr pages"]
                    for (name, count) in status.counts.sorted(by: { $0.key < $1.key }) {
                        Console.out(padded(said[name] ?? name, 11) + String(count))
                    }
                    if let helper, let answered = helper.answered, let since = helper.since,
                        let idle = helper.idleMinutes
                    {
                        let minutes = idle.formatted(.number.precision(.fractionLength(0...2)))
                        Console.out(
                            "helper     pid \(helper.pid), \(answered) command\(answered == 1 ? "" : "s") answered "
                                + "since \(since); stops after \(minutes) idle minute\(idle == 1 ? "" : "s")"
                        )
                    } else if let helper {
                        Console.out("helper     pid \(helper.pid), running a command now")
                    }
                }
            }

            /// The status, and the team helper answering this library's commands, if one runs.
            struct StatusView: Encodable {
                var status: LibraryStatus
                var helper: HelperStatus?

                enum Keys: String, CodingKey { case helper }

                func encode(to encoder: any Encoder) throws {
                    try status.encode(to: encoder)
                    var container = encoder.container(keyedBy: Keys.self)
                    try container.encodeIfPresent(helper, forKey: .helper)
                }
            }
        }

        struct Check: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "check",
                abstract: "Check the database's integrity and that every book's PDF is cached intact and indexed.",
                discussion: """
                    Also finds what a crash can leave: temporary files of margin processes that are \
                    no longer running, books whose text isn't indexed, cached files no book uses \
                    (which 'margin cache prune' removes), and a database that lost writes (its -wal \
                    file deleted, or an older copy put in place). --repair removes those temporary \
                    files, indexes those books and fetches missing PDFs from their sources. Exits \
                    non-zero when a problem remains.
                    """
            )

            @Flag(help: "Fix what can be fixed.") var repair = false
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let check = try await global.openLibrary().check(repair: repair)
                try await global.show(check) {
                    Console.out("integrity     \(check.integrity.joined(separator: "; "))")
                    Console.out(
                        "foreign keys  \(check.foreignKeyViolations.isEmpty ? "ok" : "\(check.foreignKeyViolations.count) broken")"
                    )
                    for line in check.foreignKeyViolations { Console.out("  \(line)") }
                    Console.out(
                        "cached files  \(check.missingFiles.isEmpty && check.corruptFiles.isEmpty ? "ok" : "problems")")
                    for line in check.missingFiles {
                        Console.out("  missing: \(line) (run 'margin path' to fetch it again)")
                    }
                    for line in check.corruptFiles { Console.out("  corrupt: \(line) (run 'margin cache verify')") }
                    Console.out(
                        "text index    \(check.unindexedBooks.isEmpty ? "ok" : "\(count(check.unindexedBooks.count, "book")) not indexed (--repair indexes them)")"
                    )
                    Console.out("write log     \(check.writeLog)")
                    Console.out(
                        "temporary     \(check.staleTemporaryFiles.isEmpty ? "ok" : "\(count(check.staleTemporaryFiles.count, "stale file")) (--repair removes them)")"
                    )
                    Console.out(
                        "unused files  \(check.unusedFiles.isEmpty ? "none" : "\(count(check.unusedFiles.count, "file")) no book uses ('margin cache prune' removes them)")"
                    )
                    for line in check.unusedFiles { Console.out("  unused: \(line)") }
                    Console.out(
                        "OCR kept      \(check.unusedRecognition.isEmpty ? "for PDFs in the library" : "for \(count(check.unusedRecognition.count, "PDF")) that are gone (--repair removes it)")"
                    )
                    for line in check.unusedRecognition { Console.out("  gone: \(line)") }
                    for line in check.repaired { Console.out("  repaired: \(line)") }
                }
                if !check.ok {
                    throw MarginError.io("the library has problems (see above)")
                }
            }
        }
    }
}
