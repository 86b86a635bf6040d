import ArgumentParser
import Foundation
import MarginCore
import MarginKit
import MarginSQLite

extension Margin {
    struct ImportCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Bring in a margin backup, a Zotero library, and what other tools hold.",
            discussion: """
                margin import FILE.json merges a backup (margin import backup FILE.json); \
                margin import zotero takes in a Zotero data directory. Every import is \
                idempotent: what came in before is matched, not added again, and what the other \
                tool changed since is updated. --dry-run says what would change, and --json \
                prints {added, updated, unchanged, conflicts, skipped: [{what, why}], books, \
                highlights, memos, bookmarks}: the first four count annotations, books apart.
                """,
            subcommands: Margin.subcommands(of: ImportCommand.self),
            defaultSubcommand: Backup.self
        )

        struct Backup: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "backup",
                abstract: "Merge a JSON export (backup) into the library (also: margin import FILE.json).",
                discussion: """
                    Books are matched by SHA-256 (a book not in the library is created and its PDF \
                    fetched from its sources when needed); annotations by UUID. Importing the same \
                    file twice changes nothing; when both sides changed an annotation, the newer \
                    updatedAt wins and it is counted as a conflict. Each annotation counts once as \
                    added, updated or unchanged; conflicts are counted among those. A book is also \
                    matched by its UUID and by the SHA-256 of each of its versions, so a backup made \
                    before a refresh imports into the same library. One transaction: a malformed file \
                    imports nothing and the error says where. --dry-run reports the counts only.
                    """
            )

            @Argument(help: "The JSON file (- for stdin).") var file: String
            @Flag(help: "Report what would change without writing.") var dryRun = false
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let data: Data
                if file == "-" {
                    data = FileHandle.standardInput.readDataToEndOfFile()
                } else {
                    guard FileManager.default.fileExists(atPath: file) else { throw MarginError.noSuchFile(file) }
                    // A backup is notes; one this large is not a margin backup (and would be read whole).
                    if let size = try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int,
                        size > 512 << 20
                    {
                        throw MarginError.invalidArgument(
                            "\(file) is \(formatBytes(Int64(size))): larger than any margin backup (512 MiB at most); nothing was imported"
                        )
                    }
                    data = try Data(contentsOf: URL(fileURLWithPath: file))
                }
                let backup = try Library.parseBackup(data, name: file == "-" ? "stdin" : file)
                let library = try global.openLibrary(creating: !dryRun)
                let report = try await library.importBackup(backup, dryRun: dryRun)
                try await global.show(report) {
                    let total = report.total
                    let verb = dryRun ? "would import" : "imported"
                    let annotations = total.added + total.updated + total.unchanged
                    let conflicts =
                        total.conflicts == 0 ? "" : " (\(count(total.conflicts, "conflict")): the newer side kept)"
                    Console.out(
                        "\(verb) \(count(annotations, "annotation")): \(total.added) added, \(total.updated) updated, \(total.unchanged) unchanged\(conflicts); "
                            + "books: \(report.books.added) new, \(report.books.unchanged) known")
                }
            }
        }

        struct Zotero: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "zotero",
                abstract: "Take in a Zotero library: its PDFs, their annotations, notes, collections and tags.",
                discussion: """
                    DIR is Zotero's data directory (default ~/Zotero), the folder holding \
                    zotero.sqlite and storage/. It is never changed: the database is copied and \
                    the copy read, so Zotero may be running.

                    Each PDF attachment becomes a book, described by its parent item (title, \
                    creators, year, DOI, publication, publisher, citation key from its field or \
                    an Extra line "Citation Key: …"), filed in the folder of its collection \
                    (nested: Thesis/Chapter 2; a group's under the group's name) with its tags. \
                    Highlights and underlines become highlights with their rects, comment, \
                    colour and author; note and text annotations memos on their page; the \
                    parent's notes memos on the book (as Markdown). Image and ink annotations, \
                    items in the trash and files margin can't reach are skipped, each with its \
                    reason.

                    Running it again adds only what is new and updates what Zotero changed since \
                    (a book or annotation changed in margin later than in Zotero stays as it is, \
                    counted as a conflict). All libraries are read, the user's and every group's; \
                    --group picks one group by name or id.
                    """
            )

            @Argument(help: "Zotero's data directory (default ~/Zotero).") var directory: String?
            @Option(help: ArgumentHelp("Only this group library (its name or numeric id).", valueName: "NAME|ID"))
            var group: String?
            @Option(
                help: ArgumentHelp(
                    "Zotero's base directory for linked files (Settings → Advanced → Files and Folders), for files stored relative to it.",
                    valueName: "DIR"))
            var baseDir: String?
            @OptionGroup var plan: ImportPlanOption
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let directory =
                    self.directory
                    ?? (FileManager.default.homeDirectoryForCurrentUser.path as NSString)
                    .appendingPathComponent("Zotero")
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue
                else { throw MarginError.noSuchFile(directory) }
                let library = try global.openLibrary(creating: !plan.dryRun)
                let progress = TerminalProgress.make(global)
                let report = try await library.importZotero(
                    directory: directory, reader: ZoteroDatabase(), group: group, baseDirectory: baseDir,
                    dryRun: plan.dryRun,
                    observer: progress)
                try await global.show(report) { showInterchange(report) }
            }
        }
    }
}

extension Margin.ImportCommand {
    struct KOReader: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "koreader",
            abstract: "Take in KOReader's highlights and bookmarks from its sidecar files.",
            discussion: """
                Each PATH is a sidecar (metadata.pdf.lua) or a folder searched for them (KOReader \
                keeps one in a BOOK.sdr folder beside each document, or under its docsettings \
                folder). A sidecar goes to the book whose PDF has KOReader's partial MD5, else \
                the one added from a file of the same name, else the one with its title. \
                Highlights keep their text, note, colour, date and the boxes KOReader placed \
                them with (or are found by their words when it kept none); page bookmarks keep \
                their note as a label.

                A sidecar is read as a Lua table literal, never run: one holding code is \
                refused and nothing is imported. Running it again adds only what is new.
                """
        )

        @Argument(help: "Sidecars or folders holding them.") var paths: [String]
        @OptionGroup var plan: ImportPlanOption
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard !paths.isEmpty else { throw ValidationError("give the sidecars or folders to read") }
        }

        func run() async throws {
            let library = try global.openLibrary()
            let report = try await library.importKOReader(paths: paths, dryRun: plan.dryRun)
            try await global.show(report) { showInterchange(report) }
        }
    }
}

extension Margin.ImportCommand {
    struct WebAnnotations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "web-annotations",
            abstract: "Take in W3C Web Annotations (JSON-LD) or Hypothesis's export.",
            discussion: """
                FILE holds one annotation, an array of them, an AnnotationCollection or \
                AnnotationPage (as margin export --format web-annotation writes), or \
                Hypothesis's export. Each goes to the book its target names: by its web \
                address, urn:sha256:… or DOI. A TextQuoteSelector's words are found in the \
                book's text (on the page a FragmentSelector page=N names, else wherever the \
                words and the text around them are); the body becomes the note. An annotation \
                with a urn:uuid: id keeps that UUID, so an export comes back as itself.
                """
        )

        @Argument(help: "The JSON file (- for stdin).") var file: String
        @OptionGroup var plan: ImportPlanOption
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let data = try readImportFile(file)
            let library = try global.openLibrary()
            let report = try await library.importWebAnnotations(
                data, name: file == "-" ? "stdin" : file, dryRun: plan.dryRun)
            try await global.show(report) { showInterchange(report) }
        }
    }

    struct XFDF: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "xfdf",
            abstract: "Take in a book's annotations from XFDF (Acrobat, Foxit, Okular).",
            discussion: """
                Highlight, underline, strikeout and squiggly annotations become highlights (the \
                text under their quad points), text and freetext notes memos on their page, with \
                their colour, contents, author and dates. The XML is read strictly: a DOCTYPE or \
                an entity is refused and nothing is imported.
                """
        )

        @Argument(help: "The XFDF file (- for stdin).") var file: String
        @Option(help: "The book the annotations are on.") var book: String
        @OptionGroup var plan: ImportPlanOption
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let data = try readImportFile(file)
            let library = try global.openLibrary()
            let target = try await library.resolve(book)
            let report = try await library.importXFDF(
                data, name: file == "-" ? "stdin" : file, into: target, dryRun: plan.dryRun)
            try await global.show(report) { showInterchange(report) }
        }
    }
}

/// A file to import (or stdin), refused past 512 MiB: notes, not documents.
func readImportFile(_ file: String) throws -> Data {
    if file == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: file, isDirectory: &isFolder) else {
        throw MarginError.noSuchFile(file)
    }
    if isFolder.boolValue { throw MarginError.isDirectory(file) }
    if let size = try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int, size > 512 << 20 {
        throw MarginError.invalidArgument(
            "\(file) is \(formatBytes(Int64(size))): larger than any annotation file (512 MiB at most); nothing was imported"
        )
    }
    do { return try Data(contentsOf: URL(fileURLWithPath: file)) } catch {
        throw MarginError.io("cannot read \(file): \(error.localizedDescription)")
    }
}

/// --dry-run of the imports from other tools.
struct ImportPlanOption: ParsableArguments {
    @Flag(help: "Report what would be added, updated and skipped, and why, without writing.") var dryRun = false
}

/// An import's report for a person: what came in, then what was left out and why.
func showInterchange(_ report: ImportReport) {
    let verb = report.dryRun ? "would import" : "imported"
    func line(_ name: String, _ counts: MergeCounts) -> String {
        var parts = ["\(counts.added) added", "\(counts.updated) updated", "\(counts.unchanged) unchanged"]
        if counts.conflicts > 0 { parts.append("\(counts.conflicts) differed (the newer side kept)") }
        return "  \(padded(name, 11)) " + parts.joined(separator: ", ")
    }
    Console.out("\(verb):")
    if report.books != MergeCounts() { Console.out(line("books", report.books)) }
    Console.out(line("highlights", report.highlights))
    Console.out(line("memos", report.memos))
    if report.bookmarks != MergeCounts() { Console.out(line("bookmarks", report.bookmarks)) }
    if !report.skipped.isEmpty {
        Console.out("skipped \(report.skipped.count):")
        for skipped in report.skipped { Console.out("  \(terminalSafe(skipped.what)): \(skipped.why)") }
    }
}
