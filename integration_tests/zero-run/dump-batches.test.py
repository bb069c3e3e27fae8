import array
import sys

out = sys.argv[1]


def steps(path, world):
    """[step][input] -> list of rows (tuples of 8 int32), batch 2 per rank."""
    data = array.array('i', open(path, 'rb').read())
    rows = [tuple(data[i:i + 8]) for i in range(0, len(data), 8)]
    per_input = 2 * world
    assert len(rows) == 3 * 2 * per_input, (path, len(rows))
    return [[rows[(s * 2 + i) * per_input:(s * 2 + i + 1) * per_input]
             for i in range(2)] for s in range(3)]


one, fixed, two = steps(f'{out}/one.bin', 1), steps(f'{out}/fixed.bin', 1), \
    steps(f'{out}/two.bin', 2)
for s in range(3):
    tokens, targets = one[s]
    # targets are the tokens shifted by one (next-token prediction)
    for t, y in zip(tokens, targets):
        assert t[1:] == y[:-1], (t, y)
    # the one-rank run trains on rank 0's rows of the two-rank run
    assert two[s][0][:2] == tokens and two[s][1][:2] == targets, s
    assert two[s][0][2:] != tokens, 'rank 1 has rows of its own'
    assert fixed[s] == one[0], 'fixed batch: the first batch at every step'
assert one[1] != one[0]
print('dump-batches: ok')
