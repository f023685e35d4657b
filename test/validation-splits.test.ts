// The validation splits designs are chosen on (classifier/splits.ts): the out-of-domain folds are a
// fixed fifth of each HASOC train file, never in the training part; the word lists decide as their
// packages do.
import t from 'tap'
import { hasOffensiveData, NEEDS_OFFENSIVE_DATA } from '../classifier/data.js'
import { hasocTraining, isOodFold, validationSplits } from '../classifier/splits.js'
import { WORD_LISTS } from '../classifier/word-lists.js'

t.test('the out-of-domain folds are held out of training, the same every time', { skip: !hasOffensiveData() && NEEDS_OFFENSIVE_DATA }, async (t) => {
  const splits = validationSplits()
  const training = new Set(hasocTraining().map((e) => e.text))
  for (const name of ['hasoc2019-ood', 'hasoc2020-ood']) {
    const fold = splits[name]
    t.ok(fold.length > 500, `${name}: ${fold.length} texts`)
    t.same(fold.filter((e) => training.has(e.text)).length, 0, `${name}: no text of the fold is trained on`)
  }
  t.same(validationSplits()['hasoc2019-ood'], splits['hasoc2019-ood'], 'deterministic')
  const share = Array.from({ length: 2000 }, (_, i) => `text number ${i}`).filter(isOodFold).length / 2000
  t.ok(share > 0.15 && share < 0.25, `about a fifth of texts fall in the fold (${share})`)
  t.equal(isOodFold('Some  Text '), isOodFold('some text'), 'white space and case aside')
})

t.test('the word lists flag listed words, and only whole listed words', async (t) => {
  for (const [name, offensive] of Object.entries(WORD_LISTS)) {
    t.ok(offensive('what the fuck is this'), `${name}: a listed word`)
    t.notOk(offensive('have a lovely day at the assessment'), `${name}: nothing listed`)
  }
  t.ok(WORD_LISTS.obscenity('sh1t happens'), 'obscenity reads leetspeak')
})
