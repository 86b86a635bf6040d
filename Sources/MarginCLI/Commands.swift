import ArgumentParser

/// Every verb of margin, once: the command's type (as the async command it is), its
/// subcommands, and whether `margin` runs it itself (else `margin-full` does; see `Services`).
/// The root's subcommands, each group's, and what `margin` runs itself all come from this table; help, the man page and the completions come
/// from the command tree it makes. A new verb is its file in `Subcommands/` and one line here.
struct Verb: Sendable {
    let type: any AsyncParsableCommand.Type
    let subcommands: [any AsyncParsableCommand.Type]
    /// `margin` runs it itself: it reads and writes the library but never downloads (a PDF it
    /// needs is already cached, or it says how to fetch it). Keep it to commands that never
    /// reach `Library.ensureCached` or a metadata lookup: `NoDownloader` hands a command over,
    /// but a refetch turns that error into a "cannot fetch" message.
    let runsHere: Bool

    init(
        _ type: any AsyncParsableCommand.Type, _ subcommands: [any AsyncParsableCommand.Type] = [],
        runsHere: Bool = false
    ) {
        self.type = type
        self.subcommands = subcommands
        self.runsHere = runsHere
    }
}

extension Margin {
    typealias B = BookmarkCommand
    typealias H = HighlightCommand
    typealias M = MemoCommand

    /// The verbs in the order help lists them.
    static let verbs: [Verb] = [
        Verb(Add.self), Verb(List.self, runsHere: true), Verb(Show.self, runsHere: true),
        Verb(Recent.self, runsHere: true), Verb(Edit.self, runsHere: true), Verb(Remove.self, runsHere: true),
        Verb(PathCommand.self), Verb(Fetch.self), Verb(Refresh.self),
        Verb(BookCommand.self, [BookCommand.Versions.self, BookCommand.Use.self]),
        Verb(
            CacheCommand.self,
            [CacheCommand.List.self, CacheCommand.Verify.self, CacheCommand.Prune.self, CacheCommand.Clear.self]),
        Verb(Reindex.self), Verb(OCR.self), Verb(Text.self, runsHere: true), Verb(Toc.self, runsHere: true),
        Verb(Meta.self),
        Verb(Cite.self, runsHere: true), Verb(Search.self, runsHere: true), Verb(Render.self),
        Verb(B.self, [B.Add.self, B.List.self, B.Edit.self, B.Remove.self], runsHere: true),
        Verb(H.self, [H.Add.self, H.List.self, H.Edit.self, H.Remove.self]),
        Verb(M.self, [M.Add.self, M.List.self, M.Edit.self, M.Remove.self], runsHere: true),
        Verb(Annotations.self, runsHere: true), Verb(Export.self),
        Verb(
            ImportCommand.self,
            [
                ImportCommand.Backup.self, ImportCommand.Zotero.self, ImportCommand.KOReader.self,
                ImportCommand.WebAnnotations.self, ImportCommand.XFDF.self,
            ]),
        Verb(ImportAnnotations.self),
        Verb(DB.self, [DB.Init.self, DB.Status.self, DB.Check.self, DB.Copy.self, DB.Grant.self]), Verb(Serve.self),
    ]

    /// The subcommands of a group, as the table lists them. (Each converted on its own: an
    /// array converted at once is cast at run time, each type's conformance looked up, about
    /// 2 ms of every command in `margin-full`.)
    static func subcommands(of group: any AsyncParsableCommand.Type) -> [any ParsableCommand.Type] {
        let verb = verbs.first { ObjectIdentifier($0.type) == ObjectIdentifier(group) }
        return verb?.subcommands.map { $0 as any ParsableCommand.Type } ?? []
    }
}
