import Foundation

/// Reads a Zotero database (`zotero.sqlite`, schema `resource/schema/userdata.sql` of
/// zotero/zotero): what `margin import zotero` takes in, as plain values. Item types and fields
/// are joined by their names, never by Zotero's numeric ids. The reader is handed a copy margin
/// made; it never writes.
public protocol ZoteroReader: Sendable {
    func read(databaseAt path: String) throws -> ZoteroData
}

/// A Zotero database's content, as far as margin takes it in.
public struct ZoteroData: Sendable {
    /// The `userdata` schema version, and the `compatibility` one (Zotero refuses a database
    /// whose compatibility is above what it knows; so does margin).
    public var schema: Int
    public var compatibility: Int
    public var libraries: [Library]
    public var collections: [Collection]
    public var items: [Item]
    public var attachments: [Attachment]
    public var notes: [Note]
    public var annotations: [Annotation]

    public init(
        schema: Int, compatibility: Int, libraries: [Library], collections: [Collection], items: [Item],
        attachments: [Attachment], notes: [Note], annotations: [Annotation]
    ) {
        self.schema = schema
        self.compatibility = compatibility
        self.libraries = libraries
        self.collections = collections
        self.items = items
        self.attachments = attachments
        self.notes = notes
        self.annotations = annotations
    }

    /// The user's own library, or a group's.
    public struct Library: Sendable, Equatable {
        public var id: Int64
        /// "user" or "group" (feeds are left out).
        public var type: String
        public var groupID: Int64?
        public var groupName: String?

        public init(id: Int64, type: String, groupID: Int64?, groupName: String?) {
            self.id = id
            self.type = type
            self.groupID = groupID
            self.groupName = groupName
        }
    }

    public struct Collection: Sendable {
        public var id: Int64
        public var key: String
        public var name: String
        public var parentID: Int64?
        public var libraryID: Int64
        /// The items filed in it.
        public var itemIDs: [Int64]

        public init(id: Int64, key: String, name: String, parentID: Int64?, libraryID: Int64, itemIDs: [Int64]) {
            self.id = id
            self.key = key
            self.name = name
            self.parentID = parentID
            self.libraryID = libraryID
            self.itemIDs = itemIDs
        }
    }

    /// What every item shares: its identity, type, dates and whether it is in the trash.
    public struct Common: Sendable {
        public var id: Int64
        public var key: String
        public var libraryID: Int64
        public var typeName: String
        public var dateAdded: Date
        public var dateModified: Date
        public var trashed: Bool

        public init(
            id: Int64, key: String, libraryID: Int64, typeName: String, dateAdded: Date, dateModified: Date,
            trashed: Bool
        ) {
            self.id = id
            self.key = key
            self.libraryID = libraryID
            self.typeName = typeName
            self.dateAdded = dateAdded
            self.dateModified = dateModified
            self.trashed = trashed
        }
    }

    /// A regular item (an article, a book…): its fields by name, creators in order, tags.
    public struct Item: Sendable {
        public var common: Common
        public var fields: [String: String]
        public var creators: [Creator]
        public var tags: [String]

        public init(common: Common, fields: [String: String], creators: [Creator], tags: [String]) {
            self.common = common
            self.fields = fields
            self.creators = creators
            self.tags = tags
        }
    }

    public struct Creator: Sendable, Equatable {
        public var firstName: String
        public var lastName: String
        /// 1 when the whole name is in `lastName` (an institution).
        public var singleField: Bool
        /// "author", "editor"…
        public var type: String

        public init(firstName: String, lastName: String, singleField: Bool, type: String) {
            self.firstName = firstName
            self.lastName = lastName
            self.singleField = singleField
            self.type = type
        }

        public var name: String {
            singleField || firstName.isEmpty ? lastName : firstName + " " + lastName
        }
    }

    /// A file attached to an item (or standing alone).
    public struct Attachment: Sendable {
        public var common: Common
        public var parentID: Int64?
        /// 0 imported file, 1 imported URL (both under `storage/KEY/`), 2 linked file, 3 linked
        /// URL, 4 embedded image.
        public var linkMode: Int
        public var contentType: String?
        /// "storage:name.pdf", an absolute path, or "attachments:relative/path".
        public var path: String?
        public var title: String?
        public var tags: [String]

        public init(
            common: Common, parentID: Int64?, linkMode: Int, contentType: String?, path: String?, title: String?,
            tags: [String]
        ) {
            self.common = common
            self.parentID = parentID
            self.linkMode = linkMode
            self.contentType = contentType
            self.path = path
            self.title = title
            self.tags = tags
        }
    }

    /// A note: a child of an item, or standing alone; HTML.
    public struct Note: Sendable {
        public var common: Common
        public var parentID: Int64?
        public var html: String

        public init(common: Common, parentID: Int64?, html: String) {
            self.common = common
            self.parentID = parentID
            self.html = html
        }
    }

    /// An annotation on an attachment, as Zotero's reader made it.
    public struct Annotation: Sendable {
        public var common: Common
        public var attachmentID: Int64
        /// 1 highlight, 2 note, 3 image, 4 ink, 5 underline, 6 text.
        public var type: Int
        public var authorName: String?
        public var text: String?
        public var comment: String?
        public var color: String?
        public var pageLabel: String?
        public var sortIndex: String
        /// JSON: `{"pageIndex": 0, "rects": [[x1, y1, x2, y2], …]}` in PDF points.
        public var position: String
        public var tags: [String]

        public init(
            common: Common, attachmentID: Int64, type: Int, authorName: String?, text: String?, comment: String?,
            color: String?, pageLabel: String?, sortIndex: String, position: String, tags: [String]
        ) {
            self.common = common
            self.attachmentID = attachmentID
            self.type = type
            self.authorName = authorName
            self.text = text
            self.comment = comment
            self.color = color
            self.pageLabel = pageLabel
            self.sortIndex = sortIndex
            self.position = position
            self.tags = tags
        }
    }
}
