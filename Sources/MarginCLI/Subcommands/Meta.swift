import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct Meta: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "meta",
            abstract: "Show, fill or correct what a book is: title, authors, year, DOI, arXiv id, citation key.",
            discussion: """
                Without options, shows the book's metadata. Values given with --title, --author, \
                --year, --doi, --arxiv, --venue, --publisher, --type and --key are set and count \
                as typed by you: what is found later never replaces them unless --overwrite. A \
                year found later replaces one only from a source as good: typed, then looked up, \
                then printed in the PDF (a date, copyright or venue line on page 1), then the \
                file's creation date. A citation key made while the book had no author or only \
                a file name for a title is made again when real ones arrive; one made from real \
                metadata stays.

                --type says what kind of work it is, in Crossref's words (a lookup fills it): \
                journal-article, proceedings-article, book-chapter, book, posted-content \
                (preprint), dissertation, report, … It chooses the entry type citations use \
                (@inproceedings with booktitle, RIS CPAPER, CSL paper-conference, …).

                --refresh reads the PDF again: the title and authors its first page shows (used \
                when the title it has is a placeholder: an arXiv id, a file name, an \
                application's name), the DOI, arXiv id and year, the outline and page labels. \
                Books added before margin read these get them this way (--all for every book).

                --lookup asks Crossref (by DOI) or arXiv (by arXiv id; give one with --doi or \
                --arxiv when the book has none) and fills what it says. --dry-run shows every \
                change first and changes nothing. A lookup that fails (offline, a timeout, an \
                unknown DOI, an answer that isn't the service's) is one error line and changes \
                nothing. MARGIN_CROSSREF_URL and MARGIN_ARXIV_URL point elsewhere; MARGIN_CONTACT \
                adds an e-mail address to the requests; MARGIN_LOOKUP_TIMEOUT (seconds, 20).

                --json gives {"book", "changes": [{"field", "from", "to", "source", "applied", \
                "reason"}], "dryRun", "lookedUp"} (an array of them with --all).

                Examples:
                  margin meta 3
                  margin meta 3 --doi 10.1145/3580305.3599901 --lookup --dry-run
                  margin meta "attention" --arxiv 1706.03762 --lookup
                  margin meta --all --refresh
                  margin meta 3 --year 2021 --key vaswani2017attention
                """
        )

        @Argument(help: "The book.") var book: String?
        @Flag(help: "Every book in the library (with --refresh or --lookup).") var all = false
        @Option(help: "Set the title.") var title: String?
        @Option(help: "Set the authors (\"A. Smith, B. Jones\").") var author: String?
        @Option(help: ArgumentHelp("Set the year of publication.", valueName: "Y")) var year: Int?
        @Option(help: ArgumentHelp("Set the DOI (10.…, doi:…, or a doi.org address).", valueName: "D")) var doi: String?
        @Option(help: ArgumentHelp("Set the arXiv id (2305.03393, arXiv:…, or an arxiv.org address).", valueName: "A"))
        var arxiv: String?
        @Option(help: "Set the journal or proceedings.") var venue: String?
        @Option(help: "Set the publisher.") var publisher: String?
        @Option(help: ArgumentHelp("Set the citation key.", valueName: "KEY")) var key: String?
        @Option(
            name: .customLong("type"),
            help: ArgumentHelp(
                "Set what kind of work it is (journal-article, proceedings-article, book-chapter, …).",
                valueName: "TYPE"))
        var workType: String?
        @Flag(help: "Read the PDF again for its title, authors, identifiers, outline and page labels.")
        var refresh = false
        @Flag(help: "Look the work up online: Crossref by DOI, arXiv by arXiv id.") var lookup = false
        @Flag(help: "Let what is found replace values you typed.") var overwrite = false
        @Flag(help: "Show what would change; change nothing.") var dryRun = false
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if all && book != nil { throw ValidationError("give either BOOK or --all, not both") }
            if !all && book == nil { throw ValidationError("give the book, or --all") }
            if all && !(refresh || lookup) { throw ValidationError("--all goes with --refresh or --lookup") }
            if all && !edit.isEmpty {
                throw ValidationError("values (--title, --doi, …) are set on one book at a time")
            }
            if let doi, Identifiers.parseDOI(doi) == nil {
                throw ValidationError("'\(doi)' is not a DOI (10.NNNN/…, doi:10.…, or https://doi.org/10.…)")
            }
            if let arxiv, Identifiers.parseArxiv(arxiv) == nil {
                throw ValidationError(
                    "'\(arxiv)' is not an arXiv id (2305.03393, hep-th/9901001, or an arxiv.org address)")
            }
            if let year, !(1000...2999).contains(year) { throw ValidationError("--year \(year) is not a year") }
            if let key, key.range(of: #"^[A-Za-z0-9_:.+/-]+$"#, options: .regularExpression) == nil {
                throw ValidationError("a citation key is letters, digits and _ : . + / - only")
            }
            if let workType, WorkType.known(workType) == nil {
                throw ValidationError(
                    "'\(workType)' is not a kind of work margin knows; one of: "
                        + WorkType.names.joined(separator: ", "))
            }
            if let title, title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw ValidationError("--title must not be empty")
            }
        }

        var edit: MetadataEdit {
            MetadataEdit(
                title: title?.trimmingCharacters(in: .whitespacesAndNewlines),
                author: author?.trimmingCharacters(in: .whitespacesAndNewlines), year: year,
                doi: doi.flatMap(Identifiers.parseDOI), arxiv: arxiv.flatMap(Identifiers.parseArxiv), venue: venue,
                publisher: publisher, citationKey: key, workType: workType.flatMap(WorkType.known))
        }

        func run() async throws {
            let library = try global.openLibrary()
            var sources = MetadataSources(refresh: refresh, lookup: lookup, overwrite: overwrite)
            if all {
                sources.skipUnidentified = true
                var reports = ItemReport<MetadataReport>(global)
                var failures = 0
                var unidentified = 0
                for book in try await library.allBooks() {
                    if lookup, book.doi == nil, book.arxiv == nil, !refresh { unidentified += 1 }
                    do {
                        let report = try await library.updateMetadata(
                            book, edit: edit, sources: sources, dryRun: dryRun)
                        reports.add(report) { printReport(report, quietIfUnchanged: true) }
                    } catch {
                        failures += 1
                        Console.error("error: \(book.id ?? 0)  \(terminalSafe(book.title)): \(userMessage(for: error))")
                    }
                }
                try await reports.finish()
                if unidentified > 0 {
                    global.note(
                        "note: \(unidentified) of \(reports.items.count + failures) books have no DOI or arXiv id and were not "
                            + "looked up (margin meta BOOK --doi D --lookup gives one)")
                }
                if failures > 0 { throw ExitCode(1) }
                return
            }
            let selected = try await library.resolve(book ?? "")
            if edit.isEmpty && !refresh && !lookup {
                let info = try await library.info(selected)
                try await global.show(MetadataReport(book: info, changes: [], dryRun: false, lookedUp: nil)) {
                    for (field, value) in [
                        ("id", String(selected.id ?? 0)), ("title", selected.title), ("author", selected.author ?? "-"),
                    ]
                        + metadataLines(selected)
                    {
                        Console.out(padded(field, 10) + terminalSafe(value))
                    }
                }
                return
            }
            let report = try await library.updateMetadata(selected, edit: edit, sources: sources, dryRun: dryRun)
            try await global.show(report) {
                printReport(report, quietIfUnchanged: false)
            }
        }

        private func printReport(_ report: MetadataReport, quietIfUnchanged: Bool) {
            let book = report.book.book
            if report.changes.isEmpty {
                if !quietIfUnchanged { global.note("\(book.id ?? 0)  \(book.title): nothing to change") }
                return
            }
            Console.out(
                "\(book.id ?? 0)  \(terminalSafe(book.title))" + (report.dryRun ? " (dry run: nothing changed)" : ""))
            for change in report.changes {
                // A dry run's changes would be made: only those kept back by a rule say "(kept)".
                let wouldApply = change.applied || (report.dryRun && change.reason == "dry run")
                let mark = wouldApply ? "  " : "  (kept) "
                let line =
                    "\(mark)\(change.field): \(change.from ?? "-") → \(change.to ?? "-")  [\(change.source)]"
                    + (change.reason.map { wouldApply ? "" : "  — \($0)" } ?? "")
                Console.out(terminalSafe(line))
            }
        }
    }

    struct Cite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cite",
            abstract: "Write references for books: BibTeX, CSL-JSON or RIS.",
            discussion: """
                Each book with its citation key (author-year-word, e.g. muller2023margins: made \
                once, unique in the library, kept after that; margin meta --key sets it), authors, \
                title, year, DOI, arXiv id, venue and the address it came from. BibTeX escapes TeX's \
                special characters and writes accented names as TeX accents (M{\\"u}ller); CSL-JSON \
                is what Zotero, Pandoc and citeproc read; RIS what EndNote and Mendeley import.

                Examples:
                  margin cite 3
                  margin cite 3 7 --format csl-json > refs.json
                  margin cite --all > library.bib
                """
        )

        @Argument(help: "The books.") var books: [String] = []
        @Flag(help: "Every book in the library.") var all = false
        @Option(help: "bibtex (the default), csl-json or ris.") var format: CitationFormat = .bibtex
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if all && !books.isEmpty { throw ValidationError("give either BOOK... or --all, not both") }
            if !all && books.isEmpty { throw ValidationError("give the books to cite, or --all") }
        }

        func run() async throws {
            let library = try global.openLibrary()
            let selected = try await all ? library.allBooks() : library.resolveAll(books)
            if selected.isEmpty { throw MarginError.emptyLibrary }
            let text = Citations.format(try await library.references(selected), as: format)
            try await global.show(CitationOutput(format: format.rawValue, books: selected.compactMap(\.id), text: text))
            {
                Console.write(text, to: STDOUT_FILENO)
            }
        }
    }
}

extension CitationFormat: ExpressibleByArgument {}

/// `cite --json`: the references as text, and which books they are.
private struct CitationOutput: Encodable {
    var format: String
    var books: [Int64]
    var text: String
}
