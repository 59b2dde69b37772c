// The bench is a harness like the tests: it starts its own nats-server and databases through @dura/testing
// (tag type:testing), which the root config allows only in test files. This package alone may use it in src.
import root from '../../eslint.config.mjs';

export default [
  ...root,
  {
    files: ['**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            {
              sourceTag: 'scope:bench',
              onlyDependOnLibsWithTags: ['type:pure', 'type:io', 'type:service', 'type:testing'],
            },
          ],
        },
      ],
    },
  },
  // This file extends the repo's config by path, which is what it is for.
  { files: ['eslint.config.mjs'], rules: { '@nx/enforce-module-boundaries': 'off' } },
];
