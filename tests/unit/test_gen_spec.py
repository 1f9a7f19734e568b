#!/usr/bin/env python3
"""The wrapper generator's spec (src/comm/mpi_functions.toml, read by
tools/gen_mpi_wrappers.py): it is valid and says what the runtime relies on, and
a broken entry is refused with the function and the field named.

usage: test_gen_spec.py SRC_DIR PREPROCESSED_MPI_H..."""
import os
import sys
import tempfile

SRC = sys.argv[1]
HEADERS = sys.argv[2:]
sys.path.insert(0, os.path.join(SRC, 'tools'))
import gen_mpi_wrappers as g  # noqa: E402

SPEC = os.path.join(SRC, 'src', 'comm', 'mpi_functions.toml')
passed = failed = 0


def test(fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print('ok   ' + fn.__name__)
    except (AssertionError, g.SpecError) as e:
        failed += 1
        print('FAIL %s: %r' % (fn.__name__, e))
    return fn


def refused(text, header, words):
    """Whether a spec holding `text` is refused with a message containing words."""
    with tempfile.NamedTemporaryFile('w', suffix='.toml', delete=False) as f:
        f.write(text)
    try:
        g.entry_points(g.load_spec(f.name), header)
    except g.SpecError as e:
        return all(w in str(e) for w in words)
    finally:
        os.unlink(f.name)
    return False


HEADER = 'int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, ' \
         'MPI_Comm comm);\nint MPI_File_write_at(MPI_File fh, MPI_Offset offset, ' \
         'const void *buf, int count, MPI_Datatype datatype, MPI_Status *status);\n'


@test
def broken_entries_are_refused_with_their_name():
    assert refused('[MPI_Send]\ndata = "yes"\n', HEADER, ['MPI_Send', 'data'])
    assert refused('[MPI_Send]\nbogus = 1\n', HEADER, ['MPI_Send', 'bogus'])
    assert refused('[MPI_Send]\nargs = ["buf", "count"]\n', HEADER, ['MPI_Send', '2', '6'])
    assert refused('[MPI_Send]\nargs = ["buf", "count", "datatype", "dest", "tag", "comm"]\n'
                   'buffers = [{ buf = "buff", count = "count", type = "datatype" }]\n',
                   HEADER, ['MPI_Send', 'buff'])
    assert refused('[MPI_Send]\nargs = ["buf", "count", "datatype", "dest", "tag", "comm"]\n'
                   'convert = "f({buf}, {cnt})"\n', HEADER, ['MPI_Send', 'cnt'])
    assert refused('[MPI_File_write_at]\nargs = ["fh:comm", "offset", "buf", "count", '
                   '"datatype", "status"]\n', HEADER, ['MPI_File_write_at', 'fh', 'MPI_Comm'])
    assert refused('[MPI_Send]\nbuffers = [{ buf = "buf", count = "count", type = "t" }]\n',
                   HEADER, ['MPI_Send', 'args'])
    # and a correct one is taken
    ok = '[MPI_File_write_at]\nargs = ["fh:file", "offset:offset", "buf", "count", ' \
         '"datatype:datatype", "status:status"]\n'
    assert not refused(ok, HEADER, [''])


@test
def the_spec_says_what_the_runtime_needs():
    funcs = {f.name: f for f in g.load_spec(SPEC)}
    send = funcs['MPI_Send']
    assert send.get('data') and send.get('large_count') and 'convert' in send.f
    assert send.f['convert_counts'] == ['count']
    # MPI-IO write-behind's calls: the file handle, the offset and the status by role
    for name in ('MPI_File_write_at', 'MPI_File_iwrite_at', 'MPI_File_write', 'MPI_File_iwrite'):
        f = funcs[name]
        assert 'fh:file' in f.f['args'], name
        assert ('offset:offset' in f.f['args']) == ('_at' in name), name
        assert f.get('large_count'), name
    assert 'status:status' in funcs['MPI_File_write_at'].f['args']
    assert 'request:request' in funcs['MPI_File_iwrite_at'].f['args']
    assert funcs['MPI_Isend'].f['request'] == 'request'
    assert funcs['MPI_Recv_init'].get('persistent')
    gv = funcs['MPI_Gatherv'].buffers()
    assert gv[1][5] == {'displs': 5, 'root': 7}, gv


@test
def every_header_agrees_with_the_spec():
    funcs = g.load_spec(SPEC)
    for h in HEADERS:
        entries = g.entry_points(funcs, open(h).read())
        kinds = {e.name: g.kind_of(e) for e in entries}
        assert kinds['MPI_Send'] == 'UNBLOCK_MPI_KIND_CONVERT', h
        assert kinds['MPI_Bcast'] == 'UNBLOCK_MPI_KIND_BUFS', h
        assert kinds['MPI_Isend'] == 'UNBLOCK_MPI_KIND_OWN_FOLLOWED', h  # (from Fortran too)
        assert kinds['MPI_Send_init'] == 'UNBLOCK_MPI_KIND_OWN_TRACKED', h
        assert kinds['MPI_Ibcast'] == 'UNBLOCK_MPI_KIND_OWN_TRACKED', h
        assert kinds['MPI_Finalize'] == 'UNBLOCK_MPI_KIND_FINALIZE', h
        assert kinds['MPI_File_write_at'] == 'UNBLOCK_MPI_KIND_BUFS', h
        text, wrapped = g.gen_wrappers(entries)
        assert 'mpi_file_write_at_f08ts_' in wrapped and 'MPI_FILE_WRITE_AT' in wrapped, h


print('%d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
