//! Packing the repository's objects: the reachable loose objects into a pack as lore writes
//! (one packer at a time), refs and objects together for `gc`, large writes that land
//! their objects as one pack instead of a loose file each, and which objects the database
//! holds, asked many times in one change without reading the pack directory at every miss.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use std::collections::HashSet;

use git2::{ObjectType, Odb, Oid, Repository};

use super::{Edit, Message, Snapshot, Store, git_cli};
use crate::error::{Error, Result};

/// The priority of the in-memory backend a packed write reads and writes first (libgit2 gives
/// the repository's loose and packed backends 1 and 2; alternates are never written to).
const IN_MEMORY_FIRST: i32 = 1_000;

/// Packs beyond which a repack folds all of them into one (git's `gc.autoPackLimit`).
const MOST_PACKS: usize = 50;

/// A pack lock older than this was left by a process that died.
const STALE_LOCK: Duration = Duration::from_secs(3600);

impl Store {
    /// [`Store::transact`] for a large write (an import's batch): the objects it makes are held
    /// in memory and land as one pack, with its index, before the ref moves to the commit,
    /// instead of one loose file each (20,000 memories written loose cost as many files
    /// created, then packed and deleted). A lost race lands that attempt's pack unreferenced,
    /// as a loose write leaves its objects, and tries again.
    pub fn transact_packed<T>(
        &self,
        build: impl FnMut(&Snapshot<'_>) -> Result<(Vec<Edit>, Message, T)>,
    ) -> Result<(T, Option<Oid>)> {
        let objects = self.common_dir().join("objects");
        // libgit2 takes the path as text: a repository at a path that is not UTF-8 writes
        // loose.
        let Some(objects) = objects.to_str() else {
            return self.transact(build);
        };
        let on_disk = self.repo.odb()?;
        // Every object the repository has stays readable (its objects directory as an
        // alternate, which libgit2 never writes to); every new one goes to memory.
        let staged = Odb::new()?;
        staged.add_disk_alternate(objects)?;
        let in_memory = staged.add_new_mempack_backend(IN_MEMORY_FIRST)?;
        self.repo.set_odb(&staged)?;
        let _restore = RestoreOdb {
            repo: &self.repo,
            odb: &on_disk,
        };
        self.transact_memory(build, &mut |commit, edits| {
            land_pack(&self.repo, &on_disk, commit, edits)?;
            in_memory.reset()?;
            Ok(())
        })
    }

    /// Packs lore's refs (and every loose ref with them) and the repository's loose objects, as
    /// `git pack-refs --all` and [`Store::pack_objects`] do. Returns true when done.
    pub fn pack(&self) -> Result<bool> {
        let git = git_cli::GitCli::new(&self.common_dir(), Duration::from_secs(600));
        git.maintain(&["pack-refs", "--all"])?;
        self.repack()?;
        Ok(true)
    }

    /// Packs the repository's loose objects that its refs reach (`git repack -d`); when more
    /// than 50 packs have built up (git's `gc.autoPackLimit`), all of them are packed into one
    /// (`git repack -A -d`: what no ref reaches is left loose, never deleted, so objects a
    /// concurrent writer has not yet referenced stay).
    ///
    /// One process packs at a time: while `lore/pack.lock` exists (and is younger than an
    /// hour, else it is left by a process that died) another packer skips, returning false.
    pub fn pack_objects(&self) -> Result<bool> {
        let lock = self.common_dir().join("lore").join("pack.lock");
        let stale = std::fs::metadata(&lock)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_LOCK);
        if stale {
            let _ = std::fs::remove_file(&lock);
        }
        if let Some(dir) = lock.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
            Err(e) => return Err(Error::io(lock.display().to_string(), e)),
        }
        let packed = self.repack();
        let _ = std::fs::remove_file(&lock);
        packed.map(|()| true)
    }

    /// `git repack -d`, or `-A -d` once more than [`MOST_PACKS`] packs have built up; either
    /// writes a multi-pack index (`--write-midx`), so that finding an object takes one lookup
    /// however many packs an import left (at a million memories, 50 packs made a `remember`
    /// search each pack's index in turn: 24 → 16 ms a process with the multi-pack index).
    ///
    /// A git older than 2.34 has no `--write-midx`: the repack is run again without it.
    fn repack(&self) -> Result<()> {
        let packs = pack_sizes(&self.common_dir()).len();
        let git = git_cli::GitCli::new(&self.common_dir(), Duration::from_secs(3600));
        let args: &[&str] = match packs > MOST_PACKS {
            true => &["repack", "-A", "-d", "-q"],
            false => &["repack", "-d", "-q"],
        };
        let with_index = [args, &["--write-midx"]].concat();
        git.maintain(&with_index).or_else(|_| git.maintain(args))
    }
}

/// The size in bytes of each pack of the repository whose git directory is `git_dir`.
pub fn pack_sizes(git_dir: &Path) -> Vec<u64> {
    let Ok(entries) = std::fs::read_dir(git_dir.join("objects").join("pack")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .collect()
}

/// Puts the repository's own object database back when a packed write ends, however it ends
/// (the in-memory one must never outlive the write: objects written to it would be lost).
struct RestoreOdb<'a> {
    repo: &'a Repository,
    odb: &'a Odb<'a>,
}

impl Drop for RestoreOdb<'_> {
    fn drop(&mut self) {
        // libgit2 only swaps a reference-counted pointer here: it cannot fail.
        let _ = self.repo.set_odb(self.odb);
    }
}

/// Writes the objects a commit added as one pack (and its index) into the repository's
/// objects: the commit, the trees on the path to each file it edits, and the files it wrote.
/// (libgit2's own dump of the objects in memory would pack each commit's whole tree.) An
/// object the repository had already (an edit that changed nothing) is packed again, which
/// git allows.
fn land_pack(repo: &Repository, on_disk: &Odb<'_>, commit: Oid, edits: &[Edit]) -> Result<()> {
    let root = repo.find_commit(commit)?.tree()?;
    let mut objects = vec![commit, root.id()];
    let mut trees = HashSet::new();
    for edit in edits {
        let (Edit::Upsert { path, .. } | Edit::Remove { path }) = edit;
        let mut dir = String::new();
        for part in path.split('/') {
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(part);
            match root.get_path(Path::new(&dir)) {
                Ok(entry) => match entry.kind() {
                    Some(ObjectType::Tree) if trees.insert(entry.id()) => objects.push(entry.id()),
                    Some(ObjectType::Blob) if matches!(edit, Edit::Upsert { .. }) => {
                        objects.push(entry.id())
                    }
                    _ => {}
                },
                // A removed file (or a directory it emptied) is not in the new tree.
                Err(e) if e.code() == git2::ErrorCode::NotFound => break,
                Err(e) => return Err(e.into()),
            }
        }
    }
    let pack = undeltified_pack(&repo.odb()?, &objects)?;
    // Never empty: the commit is always new.
    let mut writer = on_disk.packwriter()?;
    writer
        .write_all(&pack)
        .map_err(|e| Error::io("writing a pack of new objects".to_string(), e))?;
    writer.commit()?;
    Ok(())
}

/// A pack (git's format, version 2) holding each of `objects` once, whole: no object is stored
/// as a delta against another. The objects a batch adds are unrelated memories and the trees
/// of distinct directories, so searching for deltas (as libgit2's pack builder does, on one
/// core) cost a tenth of an import of 100,000 memories and saved about 2% of the pack; a full
/// `git gc` finds the deltas worth having later.
fn undeltified_pack(odb: &Odb<'_>, objects: &[Oid]) -> Result<Vec<u8>> {
    use sha1::Digest;
    let mut seen = HashSet::with_capacity(objects.len());
    let objects: Vec<Oid> = objects
        .iter()
        .copied()
        .filter(|o| seen.insert(*o))
        .collect();
    let count = u32::try_from(objects.len()).map_err(|_| Error::Invalid {
        what: "pack",
        value: objects.len().to_string(),
        reason: "too many objects for one pack".into(),
    })?;
    let mut pack = Vec::with_capacity(64 * objects.len() + 32);
    pack.extend_from_slice(b"PACK");
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&count.to_be_bytes());
    // One compressor for every object, reset between them (making one costs more than
    // compressing a small memory).
    let mut deflate = flate2::Compress::new(flate2::Compression::default(), true);
    let mut scratch = Vec::new();
    for oid in objects {
        let object = odb.read(oid)?;
        let kind = match object.kind() {
            ObjectType::Commit => 1,
            ObjectType::Tree => 2,
            ObjectType::Blob => 3,
            ObjectType::Tag => 4,
            other => {
                return Err(Error::Invalid {
                    what: "object",
                    value: oid.to_string(),
                    reason: format!("a {other} cannot be packed"),
                });
            }
        };
        let data = object.data();
        put_object_header(&mut pack, kind, data.len() as u64);
        deflate_into(&mut deflate, data, &mut scratch, &mut pack)?;
    }
    let checksum = sha1::Sha1::digest(&pack);
    pack.extend_from_slice(&checksum);
    Ok(pack)
}

/// Appends `data` to `out` as one zlib stream, compressed through `scratch` (kept between
/// objects: it is zeroed only when it grows). Compressing into `out` itself would not do:
/// `compress_vec` zeroes the whole spare capacity of the vector it writes to, and a pack's
/// vector keeps megabytes spare, so every object paid for zeroing them (a quarter of an import).
fn deflate_into(
    deflate: &mut flate2::Compress,
    data: &[u8],
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<()> {
    deflate.reset();
    let failed =
        |e: flate2::CompressError| Error::io("compressing an object".to_string(), e.into());
    // zlib's bound for one stream: the data, a little per block, header and checksum.
    let bound = data.len() + data.len() / 1000 + 64;
    if scratch.len() < bound {
        scratch.resize(bound, 0);
    }
    loop {
        let (read, written) = (deflate.total_in() as usize, deflate.total_out() as usize);
        let status = deflate
            .compress(
                &data[read..],
                &mut scratch[written..],
                flate2::FlushCompress::Finish,
            )
            .map_err(failed)?;
        if status == flate2::Status::StreamEnd {
            out.extend_from_slice(&scratch[..deflate.total_out() as usize]);
            return Ok(());
        }
        // The stream did not end: the room ran out (past zlib's bound); give it more.
        scratch.resize(scratch.len() * 2, 0);
    }
}

/// An entry's header in a pack: the type in bits 4-6 of the first byte and the size below it,
/// four bits in the first byte and seven in each next one, the high bit saying one follows.
fn put_object_header(out: &mut Vec<u8>, kind: u8, size: u64) {
    let mut byte = (kind << 4) | (size & 0x0f) as u8;
    let mut rest = size >> 4;
    while rest > 0 {
        out.push(byte | 0x80);
        byte = (rest & 0x7f) as u8;
        rest >>= 7;
    }
    out.push(byte);
}

/// Which objects an object database holds, asked many times in one change. libgit2 reads the
/// pack directory again after every lookup that misses (a new object always does), which in an
/// import of a million memories, with a pack landed per batch, was a tenth of its time: here
/// the directory is read again at most once per change, at the first miss. An object packed by
/// another process after that (a repack moves loose objects into a pack) reads as missing; a
/// caller that refuses an object it takes to be new asks again with [`Holdings::surely`].
pub(super) struct Holdings<'o> {
    odb: &'o git2::Odb<'o>,
    refreshed: bool,
}

impl<'o> Holdings<'o> {
    pub(super) fn new(odb: &'o git2::Odb<'o>) -> Self {
        Holdings {
            odb,
            refreshed: false,
        }
    }

    pub(super) fn object(&mut self, oid: Oid) -> bool {
        let cached = git2::OdbLookupFlags::NO_REFRESH;
        if self.odb.exists_ext(oid, cached) {
            return true;
        }
        if self.refreshed {
            return false;
        }
        // As libgit2's own lookup does, a directory that cannot be read again is no answer:
        // the object is taken as missing.
        let _ = self.odb.refresh();
        self.refreshed = true;
        self.odb.exists_ext(oid, cached)
    }

    /// Whether the database holds `oid`, the pack directory read again first.
    pub(super) fn surely(&self, oid: Oid) -> bool {
        self.odb.exists(oid)
    }
}

#[cfg(test)]
mod tests {
    use super::{Holdings, deflate_into, put_object_header};

    /// An object packed by another process after the database was opened is found (the pack
    /// directory is read again at the first miss), and a missing one is missing.
    #[test]
    fn an_object_packed_since_the_database_opened_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        let odb = repo.odb().unwrap();
        let early = repo.blob(b"written before").unwrap();
        // Another process: a blob written, put in a pack of its own, its loose file removed.
        let git = |args: &[&str], input: &str| -> String {
            use std::io::Write;
            let mut child = std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "git {args:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        let late = git(
            &["hash-object", "-w", "--stdin"],
            "written by another process",
        );
        git(&["pack-objects", "-q", ".git/objects/pack/pack"], &late);
        git(&["prune-packed"], "");
        let late = git2::Oid::from_str(late.trim()).unwrap();
        assert!(!odb.exists_ext(late, git2::OdbLookupFlags::NO_REFRESH));
        let mut has = Holdings::new(&odb);
        assert!(has.object(early));
        assert!(has.object(late));
        let missing = git2::Oid::hash_object(git2::ObjectType::Blob, b"never written").unwrap();
        assert!(!has.object(missing));
        assert!(!has.surely(missing) && has.surely(late));
    }

    #[test]
    fn objects_deflated_one_after_another_each_inflate_back() {
        // Empty, short, repetitive and incompressible (past a scratch grown for the short
        // ones), then short again: each appended stream is whole and ends where the next begins.
        let mut seed = 7u64;
        let noise: Vec<u8> = (0..300_000)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 56) as u8
            })
            .collect();
        let objects: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"a memory".to_vec(),
            b"abc".repeat(50_000),
            noise,
            b"tree 1".to_vec(),
        ];
        let mut deflate = flate2::Compress::new(flate2::Compression::default(), true);
        let (mut scratch, mut out) = (Vec::new(), Vec::new());
        let mut ends = Vec::new();
        for o in &objects {
            deflate_into(&mut deflate, o, &mut scratch, &mut out).unwrap();
            ends.push(out.len());
        }
        let mut start = 0;
        for (o, end) in objects.iter().zip(ends) {
            let mut inflated = Vec::new();
            let mut z = flate2::read::ZlibDecoder::new(&out[start..end]);
            std::io::Read::read_to_end(&mut z, &mut inflated).unwrap();
            assert_eq!(&inflated, o);
            assert_eq!(z.total_in() as usize, end - start, "one stream per object");
            start = end;
        }
    }

    #[test]
    fn object_headers_carry_type_and_size_as_git_reads_them() {
        let header = |kind, size| {
            let mut out = Vec::new();
            put_object_header(&mut out, kind, size);
            out
        };
        assert_eq!(header(3, 0), [0x30]);
        assert_eq!(header(3, 15), [0x3f]);
        // 16: low four bits 0, then 1 in the next byte.
        assert_eq!(header(1, 16), [0x90, 0x01]);
        // 300 = 0b1_0010_1100: 0xc (low four), then 0b10010 = 18.
        assert_eq!(header(2, 300), [0xac, 0x12]);
        // 2^20: low four bits 0, then 2^16 as 0, 0, 4 in seven-bit groups.
        assert_eq!(header(3, 1 << 20), [0xb0, 0x80, 0x80, 0x04]);
    }
}
